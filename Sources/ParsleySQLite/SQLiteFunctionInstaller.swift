import CParsleySQLite
import ParsleyCore
import ParsleyStorage

/// Installs Parsley's SQL functions (regex, word search, geo) on a connection as C callbacks.
enum SQLiteFunctionInstaller {
    typealias Callback = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void

    static func install(on db: OpaquePointer) {
        let flags = PARSLEY_SQLITE_UTF8 | PARSLEY_SQLITE_DETERMINISTIC
        let functions: [(String, Int32, Callback)] = [
            ("parsley_regex", 3, regex), ("parsley_text_score", 4, textScore), ("parsley_geo_distance", 4, geoDistance),
            ("parsley_polygon_contains", 3, polygonContains),
        ]
        for (name, argc, fn) in functions {
            sqlite_nio_sqlite3_create_function_v2(db, name, argc, flags, nil, fn, nil, nil, nil)
        }
        parsley_sqlite_install_permission_test(db)
    }

    static func text(_ args: UnsafeMutablePointer<OpaquePointer?>?, _ i: Int) -> String? {
        guard let value = args?[i], sqlite_nio_sqlite3_value_type(value) == PARSLEY_SQLITE_TEXT,
            let ptr = sqlite_nio_sqlite3_value_text(value)
        else { return nil }
        return String(decoding: UnsafeBufferPointer(start: ptr, count: Int(sqlite_nio_sqlite3_value_bytes(value))), as: UTF8.self)
    }

    static func double(_ args: UnsafeMutablePointer<OpaquePointer?>?, _ i: Int) -> Double? {
        guard let value = args?[i] else { return nil }
        switch sqlite_nio_sqlite3_value_type(value) {
        case PARSLEY_SQLITE_INTEGER, PARSLEY_SQLITE_FLOAT: return sqlite_nio_sqlite3_value_double(value)
        default: return nil
        }
    }

    static func integer(_ args: UnsafeMutablePointer<OpaquePointer?>?, _ i: Int) -> Int64? {
        guard let value = args?[i], sqlite_nio_sqlite3_value_type(value) == PARSLEY_SQLITE_INTEGER else { return nil }
        return sqlite_nio_sqlite3_value_int64(value)
    }

    static let regex: Callback = { context, _, args in
        guard let pattern = text(args, 0), let options = text(args, 1), let subject = text(args, 2) else {
            sqlite_nio_sqlite3_result_int64(context, 0)
            return
        }
        do {
            let matched = try RegexCache.shared.matches(pattern: pattern, options: options, subject: subject)
            sqlite_nio_sqlite3_result_int64(context, matched ? 1 : 0)
        } catch is RegexCache.InvalidPattern {
            sqlite_nio_sqlite3_result_error(context, SQLiteErrors.invalidRegexMessage, -1)
        } catch {
            sqlite_nio_sqlite3_result_error(context, SQLiteErrors.regexTimeoutMessage, -1)
        }
    }

    static let textScore: Callback = { context, _, args in
        guard let value = text(args, 0), let term = text(args, 1) else {
            sqlite_nio_sqlite3_result_double(context, 0)
            return
        }
        let score = TextSearchScore.score(
            text: value, term: term, caseSensitive: integer(args, 2) == 1, diacriticSensitive: integer(args, 3) == 1)
        sqlite_nio_sqlite3_result_double(context, score)
    }

    static let geoDistance: Callback = { context, _, args in
        guard let lat = double(args, 0), let lng = double(args, 1), let lat2 = double(args, 2), let lng2 = double(args, 3) else {
            sqlite_nio_sqlite3_result_null(context)
            return
        }
        sqlite_nio_sqlite3_result_double(context, GeoMath.distanceRadians(lat, lng, lat2, lng2))
    }

    static let polygonContains: Callback = { context, _, args in
        guard let polygonText = text(args, 0), let lat = double(args, 1), let lng = double(args, 2),
            let polygon = try? JSONParser.parse(polygonText), let points = ParseValue.polygonPoints(polygon)
        else {
            sqlite_nio_sqlite3_result_int64(context, 0)
            return
        }
        sqlite_nio_sqlite3_result_int64(context, GeoMath.polygonContains(points, latitude: lat, longitude: lng) ? 1 : 0)
    }
}
