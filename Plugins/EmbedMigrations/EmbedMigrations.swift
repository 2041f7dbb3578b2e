import Foundation
import PackagePlugin

/// Turns the package's top-level `Migrations/*.sql` files into a Swift source file at build time,
/// so the built binary carries its schema and needs no resource bundle. The PostgreSQL store
/// (`MagnetsPostgres`) takes `Migrations/postgres/*.sql` instead, kept beside them the same way.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder =
            target.name == "MagnetsPostgres"
            ? context.package.directoryURL.appending(path: "Migrations/postgres")
            : context.package.directoryURL.appending(path: "Migrations")
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        let sql = files.filter { $0.pathExtension == "sql" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(sql.count) migrations",
                executable: try context.tool(named: "embed-migrations").url,
                arguments: [output.path] + sql.map(\.path),
                inputFiles: sql,
                outputFiles: [output]
            )
        ]
    }
}
