/// A reference to one Parse object.
public struct Pointer: Sendable, Hashable {
    public var className: String
    public var objectId: String

    public init(className: String, objectId: String) {
        self.className = className
        self.objectId = objectId
    }

    /// Reads `{"__type":"Pointer","className":..,"objectId":..}` (also the expanded `"__type":"Object"` form).
    public init?(json: JSONValue) {
        guard case .object(let o) = json, let type = o["__type"]?.stringValue, type == "Pointer" || type == "Object",
            let c = o["className"]?.stringValue, let id = o["objectId"]?.stringValue
        else { return nil }
        self.init(className: c, objectId: id)
    }

    public var json: JSONValue { ["__type": "Pointer", "className": .string(className), "objectId": .string(objectId)] }
}

/// A latitude/longitude pair.
public struct GeoPoint: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    public init?(json: JSONValue) {
        guard json.parseType == "GeoPoint", let lat = json["latitude"]?.numberValue, let lng = json["longitude"]?.numberValue,
            (-90...90).contains(lat), (-180...180).contains(lng)
        else { return nil }
        self.init(latitude: lat, longitude: lng)
    }

    public var json: JSONValue { ["__type": "GeoPoint", "latitude": .double(latitude), "longitude": .double(longitude)] }

    /// Great-circle distance in radians (haversine).
    public func radians(to other: GeoPoint) -> Double {
        GeoMath.distanceRadians(latitude, longitude, other.latitude, other.longitude)
    }
}

/// Spherical geometry used by both the SQL functions and the in-memory matcher.
public enum GeoMath {
    public static let earthRadiusMiles = 3958.8
    public static let earthRadiusKilometers = 6371.0

    public static func distanceRadians(_ lat1: Double, _ lng1: Double, _ lat2: Double, _ lng2: Double) -> Double {
        let d2r = Double.pi / 180
        let dLat = (lat2 - lat1) * d2r
        let dLng = (lng2 - lng1) * d2r
        let a = pow2(sin(dLat / 2)) + cos(lat1 * d2r) * cos(lat2 * d2r) * pow2(sin(dLng / 2))
        return 2 * atan2(a.squareRoot(), max(0, 1 - a).squareRoot())
    }

    @inline(__always) static func pow2(_ x: Double) -> Double { x * x }

    /// Point-in-polygon by ray casting; `polygon` is a list of (latitude, longitude). Points on an edge count as inside.
    public static func polygonContains(_ polygon: [(Double, Double)], latitude: Double, longitude: Double) -> Bool {
        guard polygon.count >= 3 else { return false }
        var inside = false
        var j = polygon.count - 1
        for i in 0..<polygon.count {
            let (yi, xi) = polygon[i]
            let (yj, xj) = polygon[j]
            // On-edge check.
            let cross = (longitude - xi) * (yj - yi) - (latitude - yi) * (xj - xi)
            if abs(cross) < 1e-12, min(xi, xj) <= longitude, longitude <= max(xi, xj), min(yi, yj) <= latitude, latitude <= max(yi, yj) {
                return true
            }
            if (yi > latitude) != (yj > latitude) {
                let xCross = (xj - xi) * (latitude - yi) / (yj - yi) + xi
                if longitude < xCross { inside.toggle() }
            }
            j = i
        }
        return inside
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif
