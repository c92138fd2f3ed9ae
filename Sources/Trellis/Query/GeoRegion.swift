import Foundation

// Spherical geometry for `geoWithin`, with realm-core's semantics (it uses Google's S2 library):
// points are unit vectors, polygon edges are great-circle arcs, a ring encloses the smaller of
// the two regions it bounds, boxes are latitude/longitude rectangles whose longitude range may
// cross the antimeridian, circles are caps (every point within an angle of the center). The
// shape is checked once per query, with realm-core's messages for the common problems.

/// A point on the unit sphere.
struct GeoVector: Equatable {
    var x: Double, y: Double, z: Double

    init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// The point at `latitude`, `longitude` (degrees).
    init(latitude: Double, longitude: Double) {
        let lat = latitude * .pi / 180, lng = longitude * .pi / 180
        self.init(x: cos(lat) * cos(lng), y: cos(lat) * sin(lng), z: sin(lat))
    }

    /// Latitude in radians, from the vector (as S2 reads a point back).
    var latitude: Double { atan2(z, (x * x + y * y).squareRoot()) }
    /// Longitude in radians, in -π...π.
    var longitude: Double { atan2(y, x) }

    static func - (a: GeoVector, b: GeoVector) -> GeoVector { GeoVector(x: a.x - b.x, y: a.y - b.y, z: a.z - b.z) }
    static func + (a: GeoVector, b: GeoVector) -> GeoVector { GeoVector(x: a.x + b.x, y: a.y + b.y, z: a.z + b.z) }
    static func * (a: GeoVector, s: Double) -> GeoVector { GeoVector(x: a.x * s, y: a.y * s, z: a.z * s) }
    func dot(_ b: GeoVector) -> Double { x * b.x + y * b.y + z * b.z }
    func cross(_ b: GeoVector) -> GeoVector {
        GeoVector(x: y * b.z - z * b.y, y: z * b.x - x * b.z, z: x * b.y - y * b.x)
    }
    var norm2: Double { dot(self) }
    var normalized: GeoVector {
        let n = norm2.squareRoot()
        return n > 0 ? self * (1 / n) : self
    }

    /// Whether the great-circle arcs a→b and c→d (each shorter than a half circle) cross at a
    /// point interior to both (touching at a vertex or running along each other is no crossing).
    static func arcsCross(_ a: GeoVector, _ b: GeoVector, _ c: GeoVector, _ d: GeoVector) -> Bool {
        let ab = a.cross(b)
        let sideC = ab.dot(c), sideD = ab.dot(d)
        // c and d must lie on opposite sides of the great circle through a and b…
        guard sideC * sideD < 0 else { return false }
        let cd = c.cross(d)
        let sideA = cd.dot(a), sideB = cd.dot(b)
        // …a and b on opposite sides of the one through c and d, and the crossing the two
        // circles share must be on both arcs, not at its antipode.
        return sideA * sideB < 0 && sideC * sideA < 0
    }

    /// Whether `p` lies on the arc a→b (within rounding).
    static func isOnArc(_ p: GeoVector, _ a: GeoVector, _ b: GeoVector) -> Bool {
        if p == a || p == b { return true }
        let normal = a.cross(b)
        guard abs(normal.dot(p)) <= 1e-15 else { return false }
        return a.cross(p).dot(normal) >= 0 && p.cross(b).dot(normal) >= 0
    }
}

/// A closed ring of a polygon, oriented so that its interior (the smaller region) is on the
/// left, with a point known to be inside for containment tests.
struct GeoLoop {
    let vertices: [GeoVector]
    /// A point just inside the loop, next to a vertex.
    private let inside: GeoVector

    init(_ vertices: [GeoVector]) {
        // Interior on the left: reverse when the region on the left is over half the sphere.
        self.vertices = GeoLoop.leftArea(vertices) > 2 * .pi ? vertices.reversed() : vertices
        inside = GeoLoop.pointInside(self.vertices)
    }

    var edgeCount: Int { vertices.count }
    func edge(_ index: Int) -> (GeoVector, GeoVector) { (vertices[index], vertices[(index + 1) % vertices.count]) }

    /// The area of the region on the left of the loop as given (0...4π): the sum of the signed
    /// areas of a fan of triangles from the first vertex.
    static func leftArea(_ v: [GeoVector]) -> Double {
        var sum = 0.0
        for index in 1..<(v.count - 1) {
            let a = v[0], b = v[index], c = v[index + 1]
            sum += 2 * atan2(a.dot(b.cross(c)), 1 + a.dot(b) + b.dot(c) + c.dot(a))
        }
        return sum < 0 ? sum + 4 * .pi : sum
    }

    /// A point a hair inside the wedge the loop turns through at its second vertex (the
    /// interior is on the left of each edge).
    private static func pointInside(_ v: [GeoVector]) -> GeoVector {
        let corner = v[1], previous = v[0], next = v[2 % v.count]
        // A basis of the tangent plane at the corner.
        let east = corner.cross(GeoVector(x: 0, y: 0, z: 1)).norm2 > 1e-12
            ? GeoVector(x: 0, y: 0, z: 1).cross(corner).normalized : GeoVector(x: 1, y: 0, z: 0).cross(corner).normalized
        let north = corner.cross(east)
        func angle(_ toward: GeoVector) -> Double {
            let tangent = toward - corner * corner.dot(toward)
            return atan2(tangent.dot(north), tangent.dot(east))
        }
        let outgoing = angle(next), incoming = angle(previous)
        // Turning left (counter-clockwise) from the outgoing edge reaches the incoming one.
        var wedge = incoming - outgoing
        if wedge <= 0 { wedge += 2 * .pi }
        let direction = outgoing + wedge / 2
        let step = 1e-9
        return (corner + (east * cos(direction) + north * sin(direction)) * step).normalized
    }

    /// Whether `p` lies inside the loop: the number of edges an arc from the inside point to
    /// `p` crosses is even (the arc goes through a point beside both when they are far apart).
    func contains(_ p: GeoVector) -> Bool {
        var crossings = 0
        func count(_ from: GeoVector, _ to: GeoVector) {
            for index in 0..<edgeCount {
                let (a, b) = edge(index)
                if GeoVector.arcsCross(from, to, a, b) { crossings += 1 }
            }
        }
        if inside.dot(p) > 0 {
            count(inside, p)
        } else {
            var middle = inside.cross(p)
            if middle.norm2 < 1e-20 { middle = inside.cross(GeoVector(x: 0.6, y: 0.48, z: 0.64)) }
            middle = middle.normalized
            count(inside, middle)
            count(middle, p)
        }
        return crossings % 2 == 0
    }

    /// Whether `p` is one of the vertices or lies on an edge.
    func isOnBoundary(_ p: GeoVector) -> Bool {
        (0..<edgeCount).contains { index in
            let (a, b) = edge(index)
            return GeoVector.isOnArc(p, a, b)
        }
    }
}

/// A shape ready to test points: the region of a ``GeoShape``.
enum GeoRegion {
    /// Latitudes `lat` and longitudes `lng` in radians; `lng.lo > lng.hi` crosses the antimeridian.
    case box(lat: ClosedRange<Double>, lngLo: Double, lngHi: Double)
    /// Every point whose squared chord distance to `center` is at most `chord2`.
    case circle(center: GeoVector, chord2: Double)
    case polygon(outer: GeoLoop, holes: [GeoLoop])

    /// The region of `shape`, or the reason it is not a valid one (realm-core's wording).
    static func make(_ shape: GeoShape) -> Result<GeoRegion, GeoRegionProblem> {
        switch shape {
        case .box(let box):
            let lo = GeoVector(latitude: box.bottomLeft.latitude, longitude: box.bottomLeft.longitude)
            let hi = GeoVector(latitude: box.topRight.latitude, longitude: box.topRight.longitude)
            guard lo.latitude <= hi.latitude else { return .failure(GeoRegionProblem("Invalid rectangle")) }
            // -180° and 180° are one meridian: a range starting at -180° starts at 180°.
            var lngLo = lo.longitude, lngHi = hi.longitude
            if lngLo == -.pi, lngHi != .pi { lngLo = .pi }
            if lngHi == -.pi, lngLo != .pi { lngHi = .pi }
            return .success(.box(lat: lo.latitude...hi.latitude, lngLo: lngLo, lngHi: lngHi))
        case .circle(let circle):
            let center = GeoVector(latitude: circle.center.latitude, longitude: circle.center.longitude)
            let half = min(circle.radians, .pi) / 2
            return .success(.circle(center: center, chord2: 4 * sin(half) * sin(half)))
        case .polygon(let polygon):
            return GeoPolygonBuilder.region(polygon)
        }
    }

    /// Whether the point at `latitude`, `longitude` (degrees) lies in the region.
    func contains(latitude: Double, longitude: Double) -> Bool {
        let p = GeoVector(latitude: latitude, longitude: longitude)
        switch self {
        case .box(let lat, let lngLo, let lngHi):
            guard lat.contains(p.latitude) else { return false }
            var lng = p.longitude
            if lng == -.pi { lng = .pi }
            return lngLo <= lngHi ? (lngLo <= lng && lng <= lngHi) : (lng >= lngLo || lng <= lngHi)
        case .circle(let center, let chord2):
            return (center - p).norm2 <= chord2
        case .polygon(let outer, let holes):
            return outer.contains(p) && !holes.contains { $0.contains(p) }
        }
    }
}

/// Why a shape is no region, in realm-core's words.
struct GeoRegionProblem: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
