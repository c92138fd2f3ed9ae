import Foundation

/// Checks a ``GeoPolygon`` as realm-core does (following MongoDB's GeoJSON rules) and builds
/// its region: each ring closed, at least three different vertices, no vertex twice, no edges
/// crossing; holes inside the outer ring, sharing no edge with another ring, not crossing each
/// other and not nested.
enum GeoPolygonBuilder {
    static func region(_ polygon: GeoPolygon) -> Result<GeoRegion, GeoRegionProblem> {
        do {
            let rings = [polygon.outerRing] + (polygon.holes ?? [])
            var loops = [GeoLoop]()
            for (index, ring) in rings.enumerated() {
                let loop = try loop(ring, index: index)
                if index > 0 { try checkHole(loop, index: index, in: loops[0]) }
                loops.append(loop)
            }
            try checkRingsTogether(loops)
            return .success(.polygon(outer: loops[0], holes: Array(loops.dropFirst())))
        } catch let problem as GeoRegionProblem {
            return .failure(problem)
        } catch {
            return .failure(GeoRegionProblem("\(error)"))
        }
    }

    /// One ring as a loop: adjacent repeats dropped, then the closing point.
    private static func loop(_ ring: [GeoPoint], index: Int) throws -> GeoLoop {
        var vertices = [GeoVector]()
        for point in ring {
            let vector = GeoVector(latitude: point.latitude, longitude: point.longitude)
            if vertices.last != vector { vertices.append(vector) }
        }
        if !vertices.isEmpty { vertices.removeLast() }
        guard vertices.count >= 3 else {
            throw GeoRegionProblem("Ring \(index) must have at least 3 different vertices, \(vertices.count) unique "
                + "vertices were provided")
        }
        for i in 0..<vertices.count {
            for j in (i + 1)..<vertices.count where vertices[i] == vertices[j] {
                throw GeoRegionProblem("Ring \(index) is not valid: 'Duplicate vertices: \(i) and \(j)'")
            }
        }
        let count = vertices.count
        for i in 0..<count {
            for j in stride(from: i + 2, to: count, by: 1) where !(i == 0 && j == count - 1) {
                let a = vertices[i], b = vertices[(i + 1) % count], c = vertices[j], d = vertices[(j + 1) % count]
                if GeoVector.arcsCross(a, b, c, d) {
                    throw GeoRegionProblem("Ring \(index) is not valid: 'Edges \(i) and \(j) cross. Edge locations in "
                        + "degrees: \(degrees(a))-\(degrees(b)) and \(degrees(c))-\(degrees(d))'")
                }
            }
        }
        return GeoLoop(vertices)
    }

    /// `[latitude, longitude]` with seven decimals, as S2 prints an edge.
    private static func degrees(_ v: GeoVector) -> String {
        String(format: "[%.7f, %.7f]", v.latitude * 180 / .pi, v.longitude * 180 / .pi)
    }

    /// A hole lies inside the outer ring: each vertex is one of the outer ring's or strictly
    /// inside it, and no edges cross.
    private static func checkHole(_ hole: GeoLoop, index: Int, in outer: GeoLoop) throws {
        let problem = GeoRegionProblem("Secondary ring \(index) not contained by first exterior ring - secondary rings "
            + "must be holes in the first ring")
        for vertex in hole.vertices where !outer.vertices.contains(vertex) {
            if outer.isOnBoundary(vertex) || !outer.contains(vertex) { throw problem }
        }
        if crosses(hole, outer) { throw problem }
    }

    /// No edge twice, holes neither crossing nor nested.
    private static func checkRingsTogether(_ loops: [GeoLoop]) throws {
        for i in 1..<max(loops.count, 1) {
            for edgeIndex in 0..<loops[i].edgeCount {
                let (a, b) = loops[i].edge(edgeIndex)
                for j in 0..<i {
                    for otherIndex in 0..<loops[j].edgeCount {
                        let (c, d) = loops[j].edge(otherIndex)
                        if (a == c && b == d) || (a == d && b == c) {
                            throw GeoRegionProblem("Polygon isn't valid: 'Duplicate edge: ring \(i), edge \(edgeIndex) "
                                + "and ring \(j), edge \(otherIndex)'")
                        }
                    }
                }
            }
        }
        let holes = Array(loops.dropFirst())
        for i in holes.indices {
            for j in holes.indices where j > i && crosses(holes[i], holes[j]) {
                throw GeoRegionProblem("Polygon isn't valid: 'Ring \(i + 1) crosses ring \(j + 1)'")
            }
        }
        for (index, hole) in holes.enumerated() where hole.vertices.filter(loops[0].vertices.contains).count > 1 {
            throw GeoRegionProblem("Polygon is not normalized: 'Ring \(index + 1) shares more than one vertex with its "
                + "parent ring 0'")
        }
        // Nesting, numbered as S2 orders rings: the outer one, then each hole followed by the
        // holes inside it.
        var order = 1
        for i in holes.indices where !holes.indices.contains(where: { $0 != i && isInside(holes[i], holes[$0]) }) {
            order += 1
            if holes.indices.contains(where: { $0 != i && isInside(holes[$0], holes[i]) }) {
                throw GeoRegionProblem("Polygon interior rings cannot be nested: \(order)")
            }
        }
    }

    private static func crosses(_ a: GeoLoop, _ b: GeoLoop) -> Bool {
        for i in 0..<a.edgeCount {
            let (p, q) = a.edge(i)
            for j in 0..<b.edgeCount {
                let (r, s) = b.edge(j)
                if GeoVector.arcsCross(p, q, r, s) { return true }
            }
        }
        return false
    }

    /// Whether every vertex of `inner` not shared with `outer` lies inside `outer`.
    private static func isInside(_ inner: GeoLoop, _ outer: GeoLoop) -> Bool {
        inner.vertices.allSatisfy { outer.vertices.contains($0) || outer.contains($0) }
    }
}
