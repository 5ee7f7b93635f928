import ArgumentParser
import Foundation

@main
struct Parsley: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parsley",
        abstract: "A Parse-compatible backend server.",
        subcommands: [Serve.self, Backup.self, SchemaCommand.self, Export.self, Import.self],
        defaultSubcommand: Serve.self
    )

    /// Parse Server's flags (`--appId x`) and Parsley's (`--app-id x`) come from `OptionTable`: they are
    /// rewritten into the one option the argument parser knows before it runs.
    static func main() async {
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
