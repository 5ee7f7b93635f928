import ArgumentParser

@main
struct Parsley: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parsley",
        abstract: "A Parse-compatible backend server.",
        subcommands: [Serve.self, Backup.self, SchemaCommand.self, Export.self, Import.self],
        defaultSubcommand: Serve.self
    )
}
