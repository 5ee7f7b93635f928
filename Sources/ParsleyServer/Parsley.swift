public import ArgumentParser
import Foundation
@_exported public import ParsleyCore
@_exported public import ParsleyDomain
import Synchronization

/// `parsley`: the server and its commands. An app with Swift cloud code starts it from its own `main`:
///
///     var cloud = CloudCode()
///     cloud.define("hello") { _ in "Hello" }
///     await Parsley.main(cloud: cloud)
///
/// and is configured exactly like `parsley serve` (flags, `PARSE_SERVER_*` variables, a config file).
public struct Parsley: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "parsley",
        abstract: "A Parse-compatible backend server.",
        subcommands: [Serve.self, Backup.self, SchemaCommand.self, Export.self, Import.self, FilesCommand.self],
        defaultSubcommand: Serve.self
    )

    /// Runs the command line with the app's cloud code (none for the plain `parsley` executable).
    public static func main(cloud: CloudCode) async {
        registered.withLock { $0 = cloud }
        await main()
    }

    /// The cloud code `serve` runs.
    static let registered = Mutex(CloudCode())

    public init() {}

    /// Parse Server's flags (`--appId x`) and Parsley's (`--app-id x`) come from `OptionTable`: they are
    /// rewritten into the one option the argument parser knows before it runs.
    public static func main() async {
        let arguments: [String]
        do {
            arguments = try OptionFlags.rewrite(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("parsley: \(error)\n".utf8))
            Foundation.exit(2)
        }
        await main(arguments)
    }
}
