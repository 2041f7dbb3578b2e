import GRDB
import MagnetsCore

/// Places to start a replay near the end of the replay order, kept in memory between writes by a
/// file that stays open (a server's board). An op that sorts a little before the end — the usual
/// case when many clients send at once — then replays the few ops after the nearest of them
/// instead of every op after the last stored checkpoint, which may be thousands back.
///
/// Appending ops never makes a start wrong (the ops before it stay as they were); an op that
/// sorts before a start does, so `Integration.write` drops those and makes new ones as it
/// replays. What the file holds is the truth: a start is only used while `Stamp` shows that no
/// other write reached the file since it was made.
struct RecentStarts: Sendable {
    /// A start is kept at every `spacing`-th position, the latest `kept` of them.
    static let spacing = 64
    static let kept = 8

    /// Ascending positions.
    private(set) var starts: [Integration.Start] = []
    /// The file's current board and op count, when known (as `BoardState.loadState` reads them).
    var current: (board: Board, ops: Int)?

    /// The latest start whose last op sorts before `key`.
    func latest(before key: OrderKey) -> Integration.Start? {
        starts.last { start in start.after.map { $0 < key } ?? false }
    }

    /// Forgets the starts after `position` (an op is about to be inserted before them).
    mutating func drop(after position: Int) {
        starts.removeAll { $0.position > position }
    }

    /// Keeps `start`, which lies after every start kept, if it falls on the spacing and among
    /// the last `spacing × kept` positions before `end`, the op count once the write is done.
    mutating func offer(_ position: Int, end: Int, _ start: @autoclosure () -> Integration.Start) {
        guard position % Self.spacing == 0, end - position < Self.spacing * Self.kept else { return }
        starts.append(start())
        if starts.count > Self.kept { starts.removeFirst(starts.count - Self.kept) }
    }

    /// What every write to the file changes: SQLite's `data_version` moves when another
    /// connection commits, this connection's change count when it writes itself.
    struct Stamp: Equatable, Sendable {
        var dataVersion: Int
        var changes: Int

        /// Read inside a write transaction, before it changes anything (or after, with the
        /// `dataVersion` read before: this connection's own commits do not move it).
        init(_ db: Database, dataVersion: Int? = nil) throws {
            self.dataVersion = try dataVersion ?? Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0
            changes = db.totalChangesCount
        }
    }
}
