import ParsleyCore
import Testing

/// Geo queries: `$nearSphere`, `$within`, `$geoWithin`, `$geoIntersects`.
extension QueriesTests {
    @Test("$nearSphere sorts nearest first and honours the max distances", arguments: Backend.all)
    func nearSphere(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            // One degree of longitude on the equator is about 69.1 miles / 111.2 km / 0.01745 radians.
            let far = try await p.createId("Place", ["location": F.geo(0, 10)])
            let near = try await p.createId("Place", ["location": F.geo(0, 1)])
            let mid = try await p.createId("Place", ["location": F.geo(0, 3)])
            let close = try await p.createId("Place", ["location": F.geo(0, -2)])
            _ = try await p.createId("Place", ["name": "nowhere"])
            let origin = F.geo(0, 0)
            let ordered = try await p.orderedIds("Place", where: ["location": ["$nearSphere": origin]])
            #expect(ordered == [near, close, mid, far])
            let miles = try await p.orderedIds("Place", where: ["location": ["$nearSphere": origin, "$maxDistanceInMiles": 150]])
            #expect(miles == [near, close])
            let km = try await p.orderedIds("Place", where: ["location": ["$nearSphere": origin, "$maxDistanceInKilometers": 400]])
            #expect(km == [near, close, mid])
            let radians = try await p.orderedIds("Place", where: ["location": ["$nearSphere": origin, "$maxDistanceInRadians": 0.03]])
            #expect(radians == [near])
            let legacy = try await p.orderedIds("Place", where: ["location": ["$nearSphere": origin, "$maxDistance": 0.2]])
            #expect(legacy == [near, close, mid, far])
            let limited = try await p.orderedIds("Place", where: ["location": ["$nearSphere": F.geo(0, 9)]], ["limit": "2"])
            #expect(limited == [far, mid])
            let counted = try await p.find(
                "Place", where: ["location": ["$nearSphere": origin, "$maxDistanceInMiles": 150]], ["count": "1", "limit": "0"])
            #expect(counted["count"] == 2)
            let bad = try await p.findCode("Place", where: ["location": ["$nearSphere": ["latitude": 1]]])
            #expect(bad == 107)
            let negative = try await p.findCode("Place", where: ["location": ["$nearSphere": origin, "$maxDistanceInMiles": -1]])
            #expect(negative == 107)
        }
    }

    @Test("$within $box, $geoWithin $polygon and $centerSphere, $geoIntersects", arguments: Backend.all)
    func geoShapes(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let inside = try await p.createId("Place", ["location": F.geo(1, 1)])
            let edge = try await p.createId("Place", ["location": F.geo(0.5, 3)])
            let outside = try await p.createId("Place", ["location": F.geo(10, 10)])
            let south = try await p.createId("Place", ["location": F.geo(-5, 1)])
            let box = try await p.ids("Place", where: ["location": ["$within": ["$box": [F.geo(0, 0), F.geo(2, 2)]]]])
            #expect(box == [inside])
            let widerBox = try await p.ids("Place", where: ["location": ["$within": ["$box": [F.geo(-6, 0), F.geo(2, 4)]]]])
            #expect(widerBox == [inside, edge, south].sorted())
            let badBox = try await p.findCode("Place", where: ["location": ["$within": ["$box": [F.geo(0, 0)]]]])
            #expect(badBox == 107)
            let polygon = try await p.ids("Place", where: ["location": ["$geoWithin": ["$polygon": [F.geo(0, 0), F.geo(0, 4), F.geo(4, 0)]]]])
            #expect(polygon == [inside, edge].sorted())
            let polygonPairs = try await p.ids("Place", where: ["location": ["$geoWithin": ["$polygon": [[0, 0], [2, 0], [2, 2], [0, 2]]]]])
            #expect(polygonPairs == [inside])
            let polygonObject = try await p.ids(
                "Place",
                where: [
                    "location": ["$geoWithin": ["$polygon": ["__type": "Polygon", "coordinates": [[-6, 0], [-6, 2], [2, 2], [2, 0]]]]]
                ])
            #expect(polygonObject == [inside, south].sorted())
            let tooFew = try await p.findCode("Place", where: ["location": ["$geoWithin": ["$polygon": [F.geo(0, 0), F.geo(1, 1)]]]])
            #expect(tooFew == 107)
            // [longitude, latitude] centre, radius in radians (0.05 rad ~ 2.9 degrees).
            let circle = try await p.ids("Place", where: ["location": ["$geoWithin": ["$centerSphere": [[1, 0], 0.05]]]])
            #expect(circle == [inside, edge].sorted())
            let circlePoint = try await p.ids("Place", where: ["location": ["$geoWithin": ["$centerSphere": [F.geo(10, 10), 0.01]]]])
            #expect(circlePoint == [outside])
            let outOfRange = try await p.findCode("Place", where: ["location": ["$geoWithin": ["$polygon": [[0, 0], [200, 0], [2, 2]]]]])
            #expect(outOfRange == 107)
            let badCircle = try await p.findCode("Place", where: ["location": ["$geoWithin": ["$centerSphere": [[1, 0], -1]]]])
            #expect(badCircle == 107)

            let square = try await p.createId("Area", ["shape": ["__type": "Polygon", "coordinates": [[0, 0], [0, 10], [10, 10], [10, 0]]]])
            let tri = try await p.createId("Area", ["shape": ["__type": "Polygon", "coordinates": [[20, 20], [20, 30], [30, 20]]]])
            _ = try await p.createId("Area", ["name": "none"])
            let hitSquare = try await p.ids("Area", where: ["shape": ["$geoIntersects": ["$point": F.geo(5, 5)]]])
            #expect(hitSquare == [square])
            let hitTri = try await p.ids("Area", where: ["shape": ["$geoIntersects": ["$point": F.geo(21, 21)]]])
            #expect(hitTri == [tri])
            let miss = try await p.ids("Area", where: ["shape": ["$geoIntersects": ["$point": F.geo(-5, -5)]]])
            #expect(miss == [])
            let badPoint = try await p.findCode("Area", where: ["shape": ["$geoIntersects": ["$point": [1, 2, 3]]]])
            #expect(badPoint == 107)
        }
    }
}
