import Foundation
import Logging
import MagnetsCore
import MagnetsHosting
import NIOCore
import ServiceLifecycle
import Synchronization

/// Hands and presence between the `serve` processes of one database (SPEC §8: a page sees the
/// others' hands whichever process each reaches), on PostgreSQL's `board_hands` channel. Never
/// stored: a notification goes to the processes listening at that moment.
///
/// Sending never waits: a board's hands wait here as the latest of each person (a newer one
/// replaces one not yet sent) and its list of who is here as the latest list; one notification
/// at a time goes out with everything waiting, so a slow database sends fewer, fuller
/// notifications and holds at most one hand per person. A process's list is sent again every
/// `PresenceRules.heartbeat`; the others forget a list not heard of for
/// `PresenceRules.silence` (a process that died leaves their pages' lists then).
final class HandRelay: Sendable {
    private struct Waiting {
        /// board → person → their latest hand frame, persons in the order they came.
        var hands: [String: [(person: String, frame: ByteBuffer)]] = [:]
        var presence: [String: [EventHub.Present]] = [:]
        var wake: CheckedContinuation<Void, Never>?
        var stopped = false
    }
    private let waiting = Mutex(Waiting())
    let database: BoardDatabase

    init(database: BoardDatabase) {
        self.database = database
    }

    /// Queues a message of board `board`'s for the other processes.
    func put(_ board: String, _ message: EventHub.RelayMessage) {
        let wake = waiting.withLock { waiting -> CheckedContinuation<Void, Never>? in
            switch message {
            case .hand(let frame, let person):
                var hands = waiting.hands[board] ?? []
                if let index = hands.firstIndex(where: { $0.person == person }) {
                    hands[index].frame = frame
                } else {
                    hands.append((person, frame))
                }
                waiting.hands[board] = hands
            case .presence(let people): waiting.presence[board] = people
            }
            defer { waiting.wake = nil }
            return waiting.wake
        }
        wake?.resume()
    }

    /// Sends what waits, one notification at a time, until stopped.
    func send(logger: Logger) async {
        while true {
            let taken = waiting.withLock {
                waiting -> (
                    stopped: Bool, hands: [String: [(person: String, frame: ByteBuffer)]],
                    presence: [String: [EventHub.Present]]
                )? in
                guard waiting.stopped || !waiting.hands.isEmpty || !waiting.presence.isEmpty else { return nil }
                defer {
                    waiting.hands = [:]
                    waiting.presence = [:]
                }
                return (waiting.stopped, waiting.hands, waiting.presence)
            }
            guard let taken else {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = waiting.withLock { waiting -> Bool in
                        if waiting.stopped || !waiting.hands.isEmpty || !waiting.presence.isEmpty { return true }
                        waiting.wake = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
                continue
            }
            if taken.stopped { return }
            var payloads: [String] = []
            for (board, hands) in taken.hands { payloads += Self.payloads(board: board, hands: hands.map { $0.frame }) }
            for (board, people) in taken.presence { payloads.append(Self.payload(board: board, present: people)) }
            for payload in payloads {
                do { try await database.notifyHands(payload) } catch {
                    logger.debug("hands not relayed", metadata: ["error": "\(error.localizedDescription)"])
                }
            }
        }
    }

    func stop() {
        let wake = waiting.withLock { waiting in
            waiting.stopped = true
            defer { waiting.wake = nil }
            return waiting.wake
        }
        wake?.resume()
    }

    // MARK: - The payloads

    /// `{"process":P,"board":B,"hands":[HAND, …]}`, as few as fit `BoardDatabase.maxPayload`.
    static func payloads(board: String, hands: [ByteBuffer]) -> [String] {
        let head =
            #"{"process":"# + JSONValue.string(EventHub.process).serialized() + #","board":"#
            + JSONValue.string(board).serialized() + #","hands":["#
        var out: [String] = []
        var current = ""
        for hand in hands {
            let text = String(buffer: hand)
            guard head.utf8.count + text.utf8.count + 2 <= BoardDatabase.maxPayload else { continue }
            if !current.isEmpty, head.utf8.count + current.utf8.count + text.utf8.count + 3 > BoardDatabase.maxPayload {
                out.append(head + current + "]}")
                current = ""
            }
            current += current.isEmpty ? text : "," + text
        }
        if !current.isEmpty { out.append(head + current + "]}") }
        return out
    }

    /// `{"process":P,"board":B,"present":[{"person","name","access"}, …]}`.
    static func payload(board: String, present: [EventHub.Present]) -> String {
        JSONValue.object([
            ("process", .string(EventHub.process)), ("board", .string(board)),
            (
                "present",
                .array(
                    present.map {
                        .object([
                            ("person", .string($0.id)), ("name", .string($0.person.name)),
                            ("access", .string($0.person.mayWrite ? "write" : "read")),
                        ])
                    })
            ),
        ]).serialized()
    }

    /// What another process sent.
    enum Received {
        case hands(board: String, [(person: String, frame: ByteBuffer)])
        case presence(board: String, process: String, [EventHub.Present])
    }

    /// Reads a payload; nil for this process's own, or one that is not the server's.
    static func read(_ payload: String) -> Received? {
        guard let json = try? JSONParser.parse(payload, maxDepth: 8), let process = json["process"]?.stringValue,
            process != EventHub.process, let board = json["board"]?.stringValue
        else { return nil }
        if let hands = json["hands"]?.arrayValue {
            return .hands(
                board: board,
                hands.compactMap { hand in
                    guard let person = hand["person"]?.stringValue else { return nil }
                    return (person, ByteBuffer(string: hand.serialized()))
                })
        }
        if let people = json["present"]?.arrayValue {
            return .presence(
                board: board, process: process,
                people.compactMap { entry in
                    guard let id = entry["person"]?.stringValue, let name = entry["name"]?.stringValue else {
                        return nil
                    }
                    return (id, EventHub.Person(name: name, mayWrite: entry["access"]?.stringValue == "write"))
                })
        }
        return nil
    }
}

/// Runs the relay: listens on `board_hands` (again after the connection is lost) and sends
/// what waits, for as long as the server runs.
struct HandRelayService: Service {
    let store: PostgresBoardStore
    let logger: Logger

    func run() async throws {
        let store = self.store
        let relay = store.relay
        let logger = self.logger
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await relay.send(logger: logger) }
            group.addTask {
                while !Task.isShuttingDownGracefully && !Task.isCancelled {
                    do {
                        try await cancelWhenGracefulShutdown {
                            try await store.database.listen(
                                on: BoardDatabase.handsChannel, listening: {},
                                notified: { payload in store.relayed(payload) })
                        }
                    } catch {
                        if Task.isShuttingDownGracefully || Task.isCancelled { break }
                        logger.warning("listen for hands", metadata: ["error": "\(error.localizedDescription)"])
                    }
                    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(500)) }
                }
                relay.stop()
            }
        }
    }
}
