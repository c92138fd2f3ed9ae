import Foundation

// Realm's geospatial shapes (Realm Swift 10.54 `Geospatial.swift`, `RLMGeospatial.h`): values
// used only on the right of `geoWithin` in a typed query or `IN %@` in a predicate. Points are
// stored duck-typed, as in Realm: any embedded object with `type == "Point"` (case-insensitive)
// and `coordinates: List<Double>` holding longitude then latitude (then altitude).

/// A shape a `geoWithin` query can test points against: ``GeoBox``, ``GeoPolygon``,
/// ``GeoCircle`` (Realm's `RLMGeospatial`).
public protocol RLMGeospatial: Sendable, CustomStringConvertible {
    /// The shape as the query engine sees it. Not API.
    var _geoShape: GeoShape { get }
}

/// A latitude and longitude in degrees (and an altitude, never used in queries).
public struct GeoPoint: Sendable, Hashable, CustomStringConvertible {
    /// Latitude in degrees, -90...90.
    public let latitude: Double
    /// Longitude in degrees, -180...180.
    public let longitude: Double
    /// Altitude (0 or more); not used by queries.
    public let altitude: Double

    /// A point, or nil when latitude is outside -90...90, longitude outside -180...180, or
    /// altitude negative (or any of them NaN).
    public init?(latitude: Double, longitude: Double, altitude: Double = 0) {
        guard abs(latitude) <= 90, abs(longitude) <= 180, altitude >= 0 else { return nil }
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }

    /// A point from latitude and longitude (Realm's unlabelled form; the altitude is ignored).
    public init?(_ latitude: Double, _ longitude: Double, _ altitude: Double = 0) {
        self.init(latitude: latitude, longitude: longitude, altitude: 0)
    }

    /// `[longitude, latitude, altitude]`, as realm-core prints a point in messages.
    public var description: String {
        "[\(Self.format(longitude)), \(Self.format(latitude)), \(Self.format(altitude))]"
    }

    /// Six significant digits, as a C++ stream prints a double (`-75.5176`, `0`).
    static func format(_ value: Double) -> String { String(format: "%g", value) }
}

/// A latitude/longitude rectangle: every point whose latitude lies between the corners' and
/// whose longitude lies from the bottom left's eastwards to the top right's (across the
/// antimeridian when the bottom left's longitude is the larger). Edges included.
public struct GeoBox: RLMGeospatial, Hashable {
    /// The bottom left (south west) corner.
    public let bottomLeft: GeoPoint
    /// The top right (north east) corner.
    public let topRight: GeoPoint

    /// A box from its corners.
    public init(bottomLeft: GeoPoint, topRight: GeoPoint) {
        self.bottomLeft = bottomLeft
        self.topRight = topRight
    }

    /// A box from `(latitude, longitude)` corners; nil when a corner is not a valid point.
    public init?(bottomLeft: (Double, Double), topRight: (Double, Double)) {
        guard let bottomLeft = GeoPoint(bottomLeft.0, bottomLeft.1), let topRight = GeoPoint(topRight.0, topRight.1)
        else { return nil }
        self.init(bottomLeft: bottomLeft, topRight: topRight)
    }

    public var _geoShape: GeoShape { .box(self) }
    public var description: String { "GeoBox(\(bottomLeft), \(topRight))" }
}

/// A polygon on the sphere: an outer ring and any holes, each a closed ring (the last point
/// equals the first) of at least four points. Edges are great-circle arcs; a ring encloses the
/// smaller of the two regions it bounds.
public struct GeoPolygon: RLMGeospatial, Hashable {
    /// The outer ring.
    public let outerRing: [GeoPoint]
    /// The holes, if any.
    public let holes: [[GeoPoint]]?

    /// A polygon, or nil when a ring has fewer than four points or does not end where it
    /// starts. (Crossing edges, holes outside the outer ring and the like are reported when a
    /// query uses the polygon.)
    public init?(outerRing: [GeoPoint], holes: [[GeoPoint]]? = nil) {
        for ring in [outerRing] + (holes ?? []) {
            guard ring.count >= 4, ring.first == ring.last else { return nil }
        }
        self.outerRing = outerRing
        self.holes = holes
    }

    /// A polygon from `(latitude, longitude)` pairs; nil for an invalid point or ring.
    public init?(outerRing: [(Double, Double)], holes: [[(Double, Double)]]? = nil) {
        let outer = outerRing.compactMap { GeoPoint(latitude: $0.0, longitude: $0.1) }
        let inner = holes.map { $0.map { $0.compactMap { GeoPoint(latitude: $0.0, longitude: $0.1) } } }
        guard outer.count == outerRing.count,
              zip(inner ?? [], holes ?? []).allSatisfy({ $0.count == $1.count })
        else { return nil }
        self.init(outerRing: outer, holes: inner)
    }

    /// A polygon from `(latitude, longitude)` pairs, holes listed one by one.
    public init?(outerRing: [(Double, Double)], holes: [(Double, Double)]...) {
        self.init(outerRing: outerRing, holes: holes)
    }

    public var _geoShape: GeoShape { .polygon(self) }
    public var description: String {
        let rings = [outerRing] + (holes ?? [])
        return "GeoPolygon(" + rings.map { "{" + $0.map(\.description).joined(separator: ", ") + "}" }
            .joined(separator: ", ") + ")"
    }
}

/// A distance on the Earth's surface, kept in radians of arc (Realm's `Distance`).
public struct Distance: Sendable, Hashable {
    /// The Earth's radius used for kilometres and miles (Realm's: 6378.1 km, 3963.2 miles).
    static let earthRadiusKilometers = 6378.1
    static let earthRadiusMiles = 3963.2

    /// The distance in radians.
    public let radians: Double

    private init?(checkedRadians radians: Double) {
        guard radians >= 0 else { return nil }  // also refuses NaN
        self.radians = radians
    }

    /// A distance in radians; nil when negative or NaN.
    public static func radians(_ radians: Double) -> Distance? { Distance(checkedRadians: radians) }
    /// A distance in kilometres; nil when negative or NaN.
    public static func kilometers(_ kilometers: Double) -> Distance? {
        Distance(checkedRadians: kilometers / earthRadiusKilometers)
    }
    /// A distance in miles; nil when negative or NaN.
    public static func miles(_ miles: Double) -> Distance? { Distance(checkedRadians: miles / earthRadiusMiles) }
    /// A distance in degrees of arc; nil when negative or NaN.
    public static func degrees(_ degrees: Double) -> Distance? { Distance(checkedRadians: degrees * .pi / 180) }

    /// The distance in kilometres.
    public func asKilometers() -> Double { radians * Self.earthRadiusKilometers }
    /// The distance in miles.
    public func asMiles() -> Double { radians * Self.earthRadiusMiles }
    /// The distance in degrees of arc.
    public func asDegrees() -> Double { radians * 180 / .pi }
}

/// A circle on the sphere: every point within `radians` of arc of its center, the edge included.
public struct GeoCircle: RLMGeospatial, Hashable {
    /// The center.
    public let center: GeoPoint
    /// The radius in radians of arc.
    public let radians: Double

    /// A circle; nil when the radius is negative or NaN.
    public init?(center: GeoPoint, radiusInRadians: Double) {
        guard radiusInRadians >= 0 else { return nil }
        self.center = center
        self.radians = radiusInRadians
    }

    /// A circle with a radius given as a ``Distance``.
    public init(center: GeoPoint, radius: Distance) {
        self.center = center
        self.radians = radius.radians
    }

    /// A circle around `(latitude, longitude)`; nil for an invalid center or radius.
    public init?(center: (Double, Double), radiusInRadians: Double) {
        guard let point = GeoPoint(center.0, center.1) else { return nil }
        self.init(center: point, radiusInRadians: radiusInRadians)
    }

    /// A circle around `(latitude, longitude)` with a radius given as a ``Distance``.
    public init?(center: (Double, Double), radius: Distance) {
        guard let point = GeoPoint(center.0, center.1) else { return nil }
        self.init(center: point, radius: radius)
    }

    public var _geoShape: GeoShape { .circle(self) }
    public var description: String { "GeoCircle(\(center), \(GeoPoint.format(radians)))" }
}

/// A shape in a query. Not API.
public enum GeoShape: Sendable, Hashable, CustomStringConvertible {
    case box(GeoBox)
    case polygon(GeoPolygon)
    case circle(GeoCircle)

    public var description: String {
        switch self {
        case .box(let box): box.description
        case .polygon(let polygon): polygon.description
        case .circle(let circle): circle.description
        }
    }
}

extension Query where T: OptionalProtocol, T.Wrapped: EmbeddedObject {
    /// Whether the point this link holds (an embedded object with `type` "Point" and
    /// `coordinates` longitude, latitude) lies within `shape` (a ``GeoBox``, ``GeoPolygon`` or
    /// ``GeoCircle``). A nil link or an object whose `type` is not "Point" never matches.
    public func geoWithin<U: RLMGeospatial>(_ shape: U) -> Query<Bool> {
        compare(.in, .argument(.geo(shape._geoShape)))
    }
}
