import Foundation
import PackagePlugin

/// Turns the package's top-level `Page/` files (the board page of SPEC §8: HTML, CSS, one JS
/// module) into a Swift source file at build time, so `magnets serve` carries its page and needs
/// no resource bundle. The same tool as the migrations' (`embed-migrations --page`).
@main
struct EmbedPage: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.package.directoryURL.appending(path: "Page")
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        let page = files.filter { ["html", "css", "js"].contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedPage.swift")
        return [
            .buildCommand(
                displayName: "Embedding the page (\(page.count) files)",
                executable: try context.tool(named: "embed-migrations").url,
                arguments: ["--page", output.path] + page.map(\.path),
                inputFiles: page,
                outputFiles: [output]
            )
        ]
    }
}
