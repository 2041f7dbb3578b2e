import Foundation
import MagnetsCore
import MagnetsHosting
import MagnetsStore

/// The server's folder as the admin commands (`magnets server …`) see it: board files
/// `NAME.magnets` and the tokens in `server.sqlite`. A running server sees every change at its
/// next request.
public struct ServerFolder: Sendable {
    /// The folder's path.
    public let directory: String

    public init(_ directory: String) {
        self.directory = directory
    }

    /// The file of board `name`.
    public func boardPath(_ name: String) -> String { directory + "/" + name + ".magnets" }

    /// The boards in the folder, by name.
    public func boardNames() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".magnets") }.map { String($0.dropLast(".magnets".count)) }
            .filter(Validation.isServerBoardName).sorted()
    }

    /// The token store (created in the folder when it has none).
    public func tokens() throws -> TokenStore { try TokenStore(directory: directory) }
}

extension ServerFolder: BoardAdmin {
    package var place: String { directory }

    /// Makes the folder when it has none, then `NAME.magnets`: a new board, or a copy of
    /// `from`'s board and all its ops (refused when the file exists).
    package func addBoard(name: String, from: String?, size: Size, replica: String) async throws -> AddedBoard {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError.failed("cannot create the folder \(directory): \(error.localizedDescription)")
        }
        let path = boardPath(name)
        let file = try BoardFile.make(path, from: from, name: name, size: size, replica: replica)
        defer { try? file.close() }
        return AddedBoard(id: file.boardID, location: ("file", path), described: path)
    }

    package func hasBoard(_ name: String) async throws -> Bool {
        FileManager.default.fileExists(atPath: boardPath(name))
    }

    package func addToken(board: String, readOnly: Bool, label: String) async throws -> String {
        try tokens().add(board: board, readOnly: readOnly, label: label)
    }

    package func revoke(_ text: String) async throws -> Int { try tokens().revoke(text) }

    package func list() async throws -> (boards: [String], tokens: [TokenStore.Listed]) {
        (boardNames(), try tokens().list())
    }
}
