import ArgumentParser
import Foundation
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyStorage

/// `parsley export --class` and `parsley import --class`: one class as JSON lines or CSV, through the same
/// `ClassExport` / `ClassImport` as the dashboard, with the master key.
extension Export {
    func exportClass() async throws {
        guard let className else { return }
        guard let chosen = ClassExport.Format(rawValue: format) else { throw ServerSettings.Invalid(description: "--format must be jsonl or csv") }
        var whereValue: JSONValue?
        if let whereText {
            guard let parsed = try? JSONParser.parse(whereText), parsed.objectValue != nil else {
                throw ServerSettings.Invalid(description: "--where must be a JSON object")
            }
            whereValue = parsed
        }
        let setup = try Transfer.Setup(settings, createFolders: false)
        if let output, FileManager.default.fileExists(atPath: output) { throw ServerSettings.Invalid(description: "\(output) already exists") }
        if let path = setup.sqlitePath, !FileManager.default.fileExists(atPath: path) {
            throw ServerSettings.Invalid(description: "no database at \(path)")
        }
        var options = setup.options
        try ServerSettings.applyFileSettings(to: &options, dataDir: setup.dataDir, values: setup.values)
        let (database, shown) = try await setup.open()
        let writer = try await Transfer.writer(to: output, database: database)
        try await Transfer.removingOutputOnFailure(output) {
            let count = try await database.serving {
                let services = try await ParseServices.open(options: options, database: database, adapters: .standard)
                let count = try await ClassExport(queries: services.queries).run(className, format: chosen, where: whereValue, auth: .master) {
                    try writer.write($0)
                }
                try writer.flush()
                return count
            }
            Transfer.note("exported \(count) objects of \(className) from \(shown)\(output.map { " to \($0)" } ?? "")")
        }
    }
}

extension Import {
    func importClass() async throws {
        guard let className else { return }
        let formatName = self.format ?? (file.lowercased().hasSuffix(".csv") ? "csv" : "jsonl")
        guard let chosen = ClassExport.Format(rawValue: formatName) else {
            throw ServerSettings.Invalid(description: "--format must be jsonl or csv")
        }
        let handle = try Transfer.input(file)
        let setup = try Transfer.Setup(settings, createFolders: false)
        if let path = setup.sqlitePath, !FileManager.default.fileExists(atPath: path) {
            throw ServerSettings.Invalid(description: "no database at \(path)")
        }
        var options = setup.options
        try ServerSettings.applyFileSettings(to: &options, dataDir: setup.dataDir, values: setup.values)
        let (database, shown) = try await setup.open()
        let batchSize = batchSize
        let report = try await database.serving {
            let services = try await ParseServices.open(options: options, database: database, adapters: .standard)
            let importer = try await ClassImport(objects: services.objects, className: className, auth: .master, batchSize: batchSize)
            var reader = ClassImportReader(importer, format: chosen)
            while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty { try await reader.feed(data) }
            return try await reader.finish()
        }
        for refusal in report.refused { Transfer.note("line \(refusal.line): \(refusal.code) \(refusal.error)") }
        if report.refusedCount > report.refused.count {
            Transfer.note("(\(report.refusedCount - report.refused.count) more refused rows not listed)")
        }
        Transfer.note(
            "imported \(report.imported) objects into \(className) of \(shown) in \(report.batches) batches; \(report.refusedCount) refused")
        if report.refusedCount > 0 { throw ExitCode(3) }
    }
}
