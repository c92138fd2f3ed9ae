/// `location IN %@` / `location.geoWithin(shape)`: whether the point a link holds lies in a
/// ``GeoBox``, ``GeoPolygon`` or ``GeoCircle``. Part of ``QueryCompiler``.
///
/// As in realm-core, the point is duck-typed: the link must lead to an embedded class with a
/// String `type` and a `List<Double>` `coordinates`; an object whose `type` is not "Point" (any
/// case) or with fewer than two coordinates, and a nil link, never match.
extension QueryCompiler {
    func geoWithin(_ lhs: QueryOperand, _ shape: GeoShape, _ comparison: QueryComparison)
        throws(QueryError) -> (QueryScope) -> Bool
    {
        let described = "\(comparison.lhs) GEOWITHIN \(shape)"
        guard lhs.type == .object, comparison.op == .in, let targetName = lhs.objectClassName,
              let target = resolver.classNamed(targetName)
        else {
            throw QueryError(message: "Query '\(described)' links to data in the wrong format for a geoWithin query",
                             offset: nil)
        }
        guard target.isEmbedded else {
            throw QueryError(message: "A GEOWITHIN query can only operate on a link to an embedded class but "
                + "'\(targetName)' is at the top level", offset: nil)
        }
        guard let typeField = target.field(named: "type"), typeField.typeInfo.type == .string,
              typeField.typeInfo.collection == .none,
              let coordinatesField = target.field(named: "coordinates"), coordinatesField.typeInfo.type == .double,
              coordinatesField.typeInfo.collection == .list
        else {
            throw QueryError(message: "Query '\(described)' links to data in the wrong format for a geoWithin query",
                             offset: nil)
        }
        let region: GeoRegion
        switch GeoRegion.make(shape) {
        case .success(let made): region = made
        case .failure(let problem):
            throw QueryError(message: "Invalid region in GEOWITHIN query for parameter '\(shape)': '\(problem.reason)'",
                             offset: nil)
        }
        let core = self.core
        let targetTable = resolver.table(target)
        let isPoint: (QueryValue) -> Bool = { value in
            guard case .link(_, let key) = value, let table = targetTable, let row = core.rowView(table, key),
                  !row.isNull(typeField.rowColumn), row.string(typeField.rowColumn).lowercased() == "point"
            else { return false }
            let coordinates = core.listElements(CollectionLocation(table: table, key: key, field: coordinatesField))
            guard coordinates.count >= 2 else { return false }
            let longitude = RowView(bytes: coordinates[0]), latitude = RowView(bytes: coordinates[1])
            guard !longitude.isNull(0), !latitude.isNull(0) else { return false }
            return region.contains(latitude: latitude.double(0), longitude: longitude.double(0))
        }
        return { scope in
            var found = false
            _ = lhs.values.visit(scope) { value in
                found = isPoint(value)
                return found
            }
            return found
        }
    }
}
