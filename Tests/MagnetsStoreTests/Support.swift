import Foundation
import GRDB
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

/// A fresh temporary folder for one test, removed with everything in it when the test's suite
/// instance lets it go (Swift Testing makes one per test).
final class TemporaryFolder: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-store-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        // A file deleted meanwhile (a closing connection removes its log) stops one removal
        // part way: try again.
        for _ in 0..<3 where FileManager.default.fileExists(atPath: url.path) {
            try? FileManager.default.removeItem(at: url)
        }
    }
}

/// A suite that makes board files in its own scratch folder.
protocol BoardFileMaking {
    var scratch: TemporaryFolder { get }
}

extension BoardFileMaking {
    var folder: URL { scratch.url }

    /// A new 1000×700 board file named `name` in the scratch folder, made by `replica`.
    func make(
        _ name: String = "a.magnets", replica: String = "alice", interval: Int = BoardFile.defaultCheckpointInterval
    ) throws -> BoardFile {
        try BoardFile.create(
            folder.appendingPathComponent(name).path, name: "test", size: Size(width: 1000, height: 700),
            replica: replica, author: replica, checkpointInterval: interval)
    }
}
