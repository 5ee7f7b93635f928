extension QueryMatcher {
    /// GeoPoint and Polygon fields, with the spherical geometry the SQL functions use (`GeoMath`).
    static func geo(_ condition: Condition, _ value: JSONValue?, _ type: FieldType) -> Bool? {
        let point = value.flatMap(GeoPoint.init(json:))
        let polygon = value.flatMap(polygonPoints)
        let present = type == .geoPoint ? point != nil : polygon != nil
        switch condition {
        case .exists(let b): return present == b
        case .equals(.null): return !present
        case .notEquals(.null): return present
        case .nearSphere(let center, let max):
            guard type == .geoPoint, let point else { return false }
            guard let max else { return true }
            return point.radians(to: center) <= max
        case .withinCenterSphere(let center, let radius):
            guard type == .geoPoint, let point else { return false }
            return point.radians(to: center) <= radius
        case .withinBox(let sw, let ne):
            guard type == .geoPoint, let point else { return false }
            return (sw.latitude...ne.latitude).contains(point.latitude) && (sw.longitude...ne.longitude).contains(point.longitude)
        case .withinPolygon(let corners):
            guard type == .geoPoint, let point else { return false }
            return GeoMath.polygonContains(corners.map { ($0.latitude, $0.longitude) }, latitude: point.latitude, longitude: point.longitude)
        case .geoIntersects(let target):
            guard type == .polygon, let polygon else { return false }
            return GeoMath.polygonContains(polygon, latitude: target.latitude, longitude: target.longitude)
        default: return nil
        }
    }

    /// A stored Polygon's corners as (latitude, longitude).
    static func polygonPoints(_ value: JSONValue) -> [(Double, Double)]? {
        guard value.parseType == "Polygon", let coordinates = value["coordinates"]?.arrayValue else { return nil }
        let corners = coordinates.compactMap { pair -> (Double, Double)? in
            guard let a = pair.arrayValue, a.count == 2, let lat = a[0].numberValue, let lng = a[1].numberValue else { return nil }
            return (lat, lng)
        }
        return corners.count == coordinates.count ? corners : nil
    }
}
