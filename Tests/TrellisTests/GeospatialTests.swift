import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

// Realm's duck-typed GeoJSON point: an embedded object with `type` "Point" and `coordinates`
// longitude, latitude (Realm's GeospatialTests models, learned from, written here).
final class GeoLocation: EmbeddedObject {
    @Persisted var coordinates: List<Double>
    @Persisted var type: String = "Point"

    convenience init(_ latitude: Double, _ longitude: Double) {
        self.init()
        coordinates.append(objectsIn: [longitude, latitude])
    }
}

final class GeoPerson: Object {
    @Persisted var name = ""
    @Persisted var location: GeoLocation?

    convenience init(_ name: String, _ location: GeoLocation?) {
        self.init()
        self.name = name
        self.location = location
    }
}

final class GeoCoordinatesOnly: EmbeddedObject {
    @Persisted var coordinates: List<Double>
}

final class GeoTopLevelPoint: Object {
    @Persisted var coordinates: List<Double>
    @Persisted var type: String = "Point"
}

final class GeoWrongShapes: Object {
    @Persisted var coordinatesOnly: GeoCoordinatesOnly?
    @Persisted var topLevel: GeoTopLevelPoint?
}

/// `geoWithin` and `IN %@` with a shape, with Realm's spherical semantics, checked against
/// Realm's own expectations and, for random shapes and points, against an independent
/// computation (plain trigonometry: great-circle distances, the latitude/longitude box test,
/// and for polygons a winding-number test on the gnomonic projection).
@Suite struct GeospatialTests {
    let folder = TemporaryFolder()

    func openRealm() throws -> Realm {
        try Realm(configuration: folder.configuration([GeoPerson.self, GeoLocation.self, GeoCoordinatesOnly.self,
                                                       GeoTopLevelPoint.self, GeoWrongShapes.self]))
    }

    func populate(_ realm: Realm) throws {
        try realm.write {
            realm.add(GeoPerson("Diana", GeoLocation(40.7128, -74.0060)))
            realm.add(GeoPerson("Maria", GeoLocation(55.6761, 12.5683)))
            realm.add(GeoPerson("Tomas", GeoLocation(55.6280, 12.0826)))
            realm.add(GeoPerson("Alba", GeoLocation(-76, -76)))
            realm.add(GeoPerson("Manuela", nil))
        }
    }

    func names(_ realm: Realm, _ shape: some RLMGeospatial) -> [String] {
        let typed = realm.objects(GeoPerson.self).where { $0.location.geoWithin(shape) }.map(\.name).sorted()
        let text = realm.objects(GeoPerson.self).filter("location IN %@", shape).map(\.name).sorted()
        #expect(typed == text)
        return typed
    }

    // MARK: - The shapes

    @Test func pointsBoxesPolygonsCirclesAndDistancesValidateAsInRealm() {
        #expect(GeoPoint(latitude: 90, longitude: 180) != nil)
        #expect(GeoPoint(latitude: 90.000000001, longitude: 0) == nil)
        #expect(GeoPoint(latitude: 0, longitude: -180.000000001) == nil)
        #expect(GeoPoint(latitude: .nan, longitude: 0) == nil)
        #expect(GeoPoint(latitude: 0, longitude: 0, altitude: -1) == nil)
        #expect(GeoBox(bottomLeft: (-91, -181), topRight: (91, 181)) == nil)
        #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (2, 0), (0, 0)]) != nil)
        #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (2, 0), (3, 3)]) == nil)
        #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (0, 0)]) == nil)
        #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (2, 2), (0, 0)], holes: [[(0, 0)]]) == nil)
        #expect(Distance.kilometers(-1) == nil)
        #expect(Distance.miles(.nan) == nil)
        #expect(abs(Distance.kilometers(40075)!.radians - 2 * .pi) < 2 * .pi * 0.0001)
        #expect(abs(Distance.miles(24901)!.radians - 2 * .pi) < 2 * .pi * 0.0001)
        #expect(abs(Distance.degrees(180)!.radians - .pi) < 1e-12)
        #expect(GeoCircle(center: (0, 70), radiusInRadians: -500) == nil)
        #expect(GeoCircle(center: (0, 70), radiusInRadians: 500) != nil)
        #expect(GeoBox(bottomLeft: (0, 0), topRight: (1, 1)) == GeoBox(bottomLeft: (0, 0), topRight: (1, 1)))
        #expect(Distance.kilometers(25.01) != Distance.kilometers(25.02))
    }

    // MARK: - Realm's answers

    @Test func boxesPolygonsAndCirclesFindRealmsPeople() throws {
        let realm = try openRealm()
        try populate(realm)
        #expect(names(realm, GeoBox(bottomLeft: (55.6281, 12.0826), topRight: (55.6762, 12.5684))!) == ["Maria"])
        #expect(names(realm, GeoBox(bottomLeft: (55.6279, 12.0825), topRight: (55.6762, 12.5684))!) == ["Maria", "Tomas"])
        #expect(names(realm, GeoBox(bottomLeft: (0, -75), topRight: (60, 15))!) == ["Diana", "Maria", "Tomas"])
        // The top edge is a great-circle arc between two points at 55.6761°: it bulges north,
        // so Maria, at exactly that latitude, is inside.
        #expect(names(realm, GeoPolygon(outerRing: [(55.6281, 12.0826), (55.6761, 12.0826), (55.6761, 12.5684),
                                                    (55.6281, 12.5684), (55.6281, 12.0826)])!) == ["Maria"])
        #expect(names(realm, GeoPolygon(outerRing: [(55, 12), (55.67, 12.5), (55.67, 11.5), (55, 12)])!) == ["Tomas"])
        let outer = [(50.0, -80.0), (62, 22), (22, 22), (-80, -80), (50, -80)]
        #expect(names(realm, GeoPolygon(outerRing: [(40.0096192, -75.5175781), (60, 20), (20, 20),
                                                    (-75.5175781, -75.5175781), (40.0096192, -75.5175781)])!)
                == ["Diana", "Maria", "Tomas"])
        #expect(names(realm, GeoPolygon(outerRing: outer, holes: [[(40.7129, -75), (40.7129, -74), (40.7126, -74),
                                                                   (40.7129, -75)]])!) == ["Alba", "Maria", "Tomas"])
        #expect(names(realm, GeoPolygon(outerRing: outer, holes: [
            [(40.7129, -75), (40.7129, -74), (40.7126, -74), (40.7129, -75)],
            [(-77, -77), (-77, -75), (-75, -75), (-75, -77), (-77, -77)],
            [(55.6760, 12.5682), (55.6760, 12.5684), (55.6763, 12.5684), (55.6763, 12.5682), (55.6760, 12.5682)],
        ])!) == ["Tomas"])
        #expect(names(realm, GeoCircle(center: (55.67, 12.56), radiusInRadians: 0.001)!) == ["Maria"])
        #expect(names(realm, GeoCircle(center: (55.67, 12.56), radius: .kilometers(10)!)!) == ["Maria"])
        #expect(names(realm, GeoCircle(center: (55.67, 12.56), radius: .kilometers(100)!)!) == ["Maria", "Tomas"])
        #expect(names(realm, GeoCircle(center: (45, -20), radius: .kilometers(5000)!)!) == ["Diana", "Maria", "Tomas"])
    }

    @Test func aTypeOtherThanPointNeverMatches() throws {
        let realm = try openRealm()
        try populate(realm)
        let box = GeoBox(bottomLeft: (55.6281, 12.0826), topRight: (55.6762, 12.5684))!
        try realm.write { realm.objects(GeoPerson.self).first { $0.name == "Maria" }?.location?.type = "POINT" }
        #expect(names(realm, box) == ["Maria"])
        try realm.write { for person in realm.objects(GeoPerson.self) { person.location?.type = "Polygon" } }
        #expect(names(realm, box).isEmpty)
    }

    @Test func boxesCrossTheAntimeridianAndReachThePoles() throws {
        let realm = try openRealm()
        try realm.write {
            realm.add(GeoPerson("east", GeoLocation(10, 179.5)))
            realm.add(GeoPerson("west", GeoLocation(10, -179.5)))
            realm.add(GeoPerson("greenwich", GeoLocation(10, 0)))
            realm.add(GeoPerson("pole", GeoLocation(90, 45)))
        }
        // From 170°E eastwards to 170°W: across the antimeridian.
        #expect(names(realm, GeoBox(bottomLeft: (0, 170), topRight: (20, -170))!) == ["east", "west"])
        #expect(names(realm, GeoBox(bottomLeft: (0, -170), topRight: (20, 170))!) == ["greenwich"])
        #expect(names(realm, GeoBox(bottomLeft: (80, -180), topRight: (90, 180))!) == ["pole"])
        // A circle around the pole; and one that crosses the antimeridian.
        #expect(names(realm, GeoCircle(center: (89, -135), radius: .degrees(2)!)!) == ["pole"])
        #expect(names(realm, GeoCircle(center: (10, 180), radius: .degrees(1)!)!) == ["east", "west"])
        // A polygon around the pole (its edges are arcs, not parallels).
        #expect(names(realm, GeoPolygon(outerRing: [(80, 0), (80, 120), (80, -120), (80, 0)])!) == ["pole"])
        // A polygon across the antimeridian.
        #expect(names(realm, GeoPolygon(outerRing: [(0, 178), (0, -178), (20, -178), (20, 178), (0, 178)])!)
                == ["east", "west"])
    }

    // MARK: - Errors

    @Test func invalidShapesAndWrongModelsAreReportedWithRealmsMessages() throws {
        let realm = try openRealm()
        func message(_ shape: some RLMGeospatial, _ property: String = "location",
                     on type: Object.Type = GeoPerson.self) -> String
        {
            do {
                _ = try realm.objects(GeoPerson.self).filter(validating: "\(property) IN %@", shape)
                return ""
            } catch {
                return "\(error)"
            }
        }
        #expect(message(GeoPolygon(outerRing: [(0, 0), (0, 1), (1, 1), (1, 0), (0, 0)],
                                   holes: [[(2, 2), (2, 3), (3, 3), (3, 2), (2, 2)]])!).contains(
            "Invalid region in GEOWITHIN query for parameter 'GeoPolygon({[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], "
                + "[0, 0, 0]}, {[2, 2, 0], [3, 2, 0], [3, 3, 0], [2, 3, 0], [2, 2, 0]})': 'Secondary ring 1 not "
                + "contained by first exterior ring - secondary rings must be holes in the first ring'"))
        #expect(message(GeoPolygon(outerRing: [(0, 0), (0, 1), (1, 1), (1, 0), (0, 0)],
                                   holes: [[(0, 0.1), (0.5, 0.1), (0.5, 0.5), (0, 0.5), (0, 0.1)]])!).contains(
            "Secondary ring 1 not contained by first exterior ring"))
        #expect(message(GeoPolygon(outerRing: [(50, -50), (55, 55), (-50, 50), (70, -25), (50, -50)])!).contains(
            "'Ring 0 is not valid: 'Edges 0 and 2 cross. Edge locations in degrees: [50.0000000, -50.0000000]-"
                + "[55.0000000, 55.0000000] and [-50.0000000, 50.0000000]-[70.0000000, -25.0000000]''"))
        #expect(message(GeoPolygon(outerRing: [(50, -80), (60, 20), (20, 20), (-80, -80), (50, -80)],
                                   holes: [[(40.0096192, -75.5175781), (60, 20), (20, 20), (-75.5175781, -75.5175781),
                                            (40.0096192, -75.5175781)]])!).contains(
            "'Polygon isn't valid: 'Duplicate edge: ring 1, edge 1 and ring 0, edge 1''"))
        #expect(message(GeoPolygon(outerRing: [(50, -80), (62, 22), (22, 22), (-80, -80), (50, -80)], holes: [
            [(45, -77), (61, 21), (21, 21), (-77, -77), (45, -77)],
            [(40.0096192, -75.5175780), (60, 20), (20, 20), (-75.5175781, -75.5175781), (40.0096192, -75.5175780)],
        ])!).contains("'Polygon interior rings cannot be nested: 2'"))
        #expect(message(GeoBox(bottomLeft: (1, 1), topRight: (0, 0))!).contains("'Invalid rectangle'"))
        let circle = GeoCircle(center: (0, 0), radiusInRadians: 10)!
        #expect(throws: (any Error).self) {
            _ = try realm.objects(GeoWrongShapes.self).filter(validating: "coordinatesOnly IN %@", circle)
        }
        do {
            _ = try realm.objects(GeoWrongShapes.self).filter(validating: "coordinatesOnly IN %@", circle)
        } catch {
            #expect("\(error)".contains("Query 'coordinatesOnly GEOWITHIN GeoCircle([0, 0, 0], 10)' links to data in "
                + "the wrong format for a geoWithin query"))
        }
        do {
            _ = try realm.objects(GeoWrongShapes.self).filter(validating: "topLevel IN %@", circle)
        } catch {
            #expect("\(error)".contains("A GEOWITHIN query can only operate on a link to an embedded class but "
                + "'GeoTopLevelPoint' is at the top level"))
        }
    }

    // MARK: - Randomized, against an independent computation

    /// Great-circle distance in radians (haversine), the reference for circles.
    static func distance(_ lat1: Double, _ lng1: Double, _ lat2: Double, _ lng2: Double) -> Double {
        let r = Double.pi / 180
        let dLat = (lat2 - lat1) * r, dLng = (lng2 - lng1) * r
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * r) * cos(lat2 * r) * sin(dLng / 2) * sin(dLng / 2)
        return 2 * asin(min(1, h.squareRoot()))
    }

    /// Whether a point is inside a convex polygon given counter-clockwise around `center`: the
    /// reference projects everything onto the plane tangent at the center (gnomonic projection,
    /// where great circles are straight lines) and tests the point against each edge's line.
    /// Nil when the point is too close to an edge to call, or on the far hemisphere.
    static func insideConvex(_ ring: [(lat: Double, lng: Double)], center: (lat: Double, lng: Double),
                             _ p: (lat: Double, lng: Double)) -> Bool?
    {
        func project(_ q: (lat: Double, lng: Double)) -> (Double, Double)? {
            let r = Double.pi / 180
            let (phi, lambda) = (q.lat * r, q.lng * r), (phi0, lambda0) = (center.lat * r, center.lng * r)
            let cosc = sin(phi0) * sin(phi) + cos(phi0) * cos(phi) * cos(lambda - lambda0)
            guard cosc > 0.05 else { return nil }
            let x = cos(phi) * sin(lambda - lambda0) / cosc
            let y = (cos(phi0) * sin(phi) - sin(phi0) * cos(phi) * cos(lambda - lambda0)) / cosc
            return (x, y)
        }
        guard let point = project(p) else { return false }
        let corners = ring.compactMap(project)
        guard corners.count == ring.count else { return nil }
        var inside = true
        for index in corners.indices {
            let a = corners[index], b = corners[(index + 1) % corners.count]
            let cross = (b.0 - a.0) * (point.1 - a.1) - (b.1 - a.1) * (point.0 - a.0)
            let length = ((b.0 - a.0) * (b.0 - a.0) + (b.1 - a.1) * (b.1 - a.1)).squareRoot()
            if abs(cross) / length < 1e-9 { return nil }
            if cross < 0 { inside = false }
        }
        return inside
    }

    @Test func randomShapesAgreeWithAnIndependentComputation() throws {
        var random = SplitMix64(seed: 40)
        let realm = try openRealm()
        var points = [(lat: Double, lng: Double)]()
        try realm.write {
            for index in 0..<400 {
                let lat = Double.random(in: -90...90, using: &random)
                let lng = Double.random(in: -180...180, using: &random)
                points.append((lat, lng))
                realm.add(GeoPerson("\(index)", GeoLocation(lat, lng)))
            }
        }
        func matched(_ shape: some RLMGeospatial) -> Set<Int> {
            let typed = Set(realm.objects(GeoPerson.self).where { $0.location.geoWithin(shape) }.compactMap { Int($0.name) })
            let text = Set(realm.objects(GeoPerson.self).filter("location IN %@", shape).compactMap { Int($0.name) })
            #expect(typed == text)
            return typed
        }
        var checked = 0
        for _ in 0..<30 {
            // Circles: haversine distance against the radius (points within 1e-9 skipped).
            let center = (lat: Double.random(in: -90...90, using: &random), lng: Double.random(in: -180...180, using: &random))
            let radius = Double.random(in: 0.05...2.5, using: &random)
            let circle = try #require(GeoCircle(center: (center.lat, center.lng), radiusInRadians: radius))
            let inCircle = matched(circle)
            for (index, p) in points.enumerated() {
                let d = Self.distance(center.lat, center.lng, p.lat, p.lng)
                guard abs(d - radius) > 1e-9 else { continue }
                #expect(inCircle.contains(index) == (d < radius), "circle \(center) r \(radius), point \(p)")
                checked += 1
            }
            // Boxes: latitude range and an eastward longitude range, possibly across 180°.
            let lats = [Double.random(in: -90...90, using: &random), Double.random(in: -90...90, using: &random)].sorted()
            let west = Double.random(in: -180...180, using: &random), east = Double.random(in: -180...180, using: &random)
            let box = try #require(GeoBox(bottomLeft: (lats[0], west), topRight: (lats[1], east)))
            let inBox = matched(box)
            for (index, p) in points.enumerated() {
                let inLat = p.lat >= lats[0] && p.lat <= lats[1]
                let inLng = west <= east ? (p.lng >= west && p.lng <= east) : (p.lng >= west || p.lng <= east)
                #expect(inBox.contains(index) == (inLat && inLng), "box \(lats) \(west)→\(east), point \(p)")
                checked += 1
            }
            // Convex polygons: a random n-gon around a center, vertices counter-clockwise
            // (listed in either direction: a ring encloses the smaller region).
            let sides = Int.random(in: 3...7, using: &random)
            let size = Double.random(in: 0.1...0.9, using: &random)
            var ring = [(lat: Double, lng: Double)]()
            let start = Double.random(in: 0..<(2 * .pi), using: &random)
            for side in 0..<sides {
                let bearing = start - Double(side) * 2 * .pi / Double(sides)
                ring.append(Self.destination(center, bearing: bearing, distance: size))
            }
            let clockwise = Bool.random(using: &random)
            let listed = clockwise ? ring.reversed() : ring
            let polygon = try #require(GeoPolygon(outerRing: (listed + [listed[0]]).map { ($0.lat, $0.lng) }))
            let inPolygon = matched(polygon)
            for (index, p) in points.enumerated() {
                guard let expected = Self.insideConvex(ring, center: center, p) else { continue }
                #expect(inPolygon.contains(index) == expected, "polygon \(ring), point \(p)")
                checked += 1
            }
        }
        #expect(checked > 30_000)
    }

    /// The point `distance` radians from `start` along `bearing` (radians clockwise from north).
    static func destination(_ start: (lat: Double, lng: Double), bearing: Double, distance: Double)
        -> (lat: Double, lng: Double)
    {
        let r = Double.pi / 180
        let phi1 = start.lat * r, lambda1 = start.lng * r
        let phi2 = asin(sin(phi1) * cos(distance) + cos(phi1) * sin(distance) * cos(bearing))
        let lambda2 = lambda1 + atan2(sin(bearing) * sin(distance) * cos(phi1), cos(distance) - sin(phi1) * sin(phi2))
        var lng = lambda2 / r
        while lng > 180 { lng -= 360 }
        while lng < -180 { lng += 360 }
        return (phi2 / r, lng)
    }
}
