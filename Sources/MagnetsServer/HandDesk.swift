import Foundation
import MagnetsCore
import MagnetsHosting
import MagnetsStore
import Synchronization
import WSCore

/// What one live connection's page says about its hand and its presence (PROTOCOL.md, "Hands
/// and who is here"), checked and handed to the board's other pages: a join lists it, a hand is
/// checked (it may write, it joined, not too many, a magnet or tile the board has) and put into
/// every other page's outbox. A refusal goes to this page alone, at most once a second; its
/// connection goes on.
final class HandDesk: Sendable {
    let board: any HostedBoard
    let reader: UInt64
    let mayWrite: Bool
    let person: String

    private struct State {
        var name: String?
        var heard = ContinuousClock.now
        /// Hands taken in the current second, and when it began.
        var window = ContinuousClock.now
        var inWindow = 0
        var lastRefusal: ContinuousClock.Instant?
        /// The board's magnets and tiles as last read, and when (read again at most once a
        /// second, when a hand names something not in it).
        var magnets: Set<String> = []
        var tiles: Set<String> = []
        var read: ContinuousClock.Instant?
    }
    private let state = Mutex(State())

    init(board: any HostedBoard, reader: UInt64, mayWrite: Bool) {
        self.board = board
        self.reader = reader
        self.mayWrite = mayWrite
        person = EventHub.person(reader)
    }

    /// Takes `text` if it is a hand or presence message (true), answering a refusal to the page.
    func take(_ text: String, _ outbound: WebSocketOutboundWriter) async -> Bool {
        guard let read = HandMessage.read(text) else { return false }
        state.withLock { $0.heard = .now }
        let answer: String?
        switch read {
        case .failure(let refusal): answer = refuse(refusal.message)
        case .success(let message): answer = await take(message)
        }
        if let answer { try? await outbound.write(.text(answer)) }
        return true
    }

    private func take(_ message: HandMessage) async -> String? {
        switch message {
        case .here: return nil
        case .join(let name):
            state.withLock { $0.name = name }
            board.events.join(reader, as: .init(name: name, mayWrite: mayWrite))
            return HandMessage.joined(person)
        case .hand, .gone:
            guard mayWrite else {
                return refuse("this page's token is read-only: it cannot drag, so its hands are not shown")
            }
            let allowed = state.withLock { state -> (name: String?, tooMany: Bool) in
                let now = ContinuousClock.now
                if now - state.window >= .seconds(1) {
                    state.window = now
                    state.inWindow = 0
                }
                state.inWindow += 1
                return (state.name, state.inWindow > PresenceRules.handsPerSecond)
            }
            guard let name = allowed.name else { return refuse("join first: a hand needs the name to show with it") }
            guard !allowed.tooMany else {
                return refuse("more than \(PresenceRules.handsPerSecond) hands in a second: the rest are dropped")
            }
            if case .hand(let holding, _, _) = message, await !exists(holding) {
                switch holding {
                case .magnet(let id): return refuse("no magnet '\(id.prefix(64))' on this board: the hand is dropped")
                case .tile(let letter, let color):
                    return refuse("no tile '\(letter.prefix(64))' \(color.prefix(32)) in the tray: the hand is dropped")
                }
            }
            board.events.publish(hand: HandMessage.frame(person: person, name: name, message), of: person, from: reader)
            return nil
        }
    }

    /// Whether the board has what the hand holds (read again at most once a second).
    private func exists(_ holding: HandMessage.Holding) async -> Bool {
        func known(_ state: State) -> Bool {
            switch holding {
            case .magnet(let id): state.magnets.contains(id)
            case .tile(let letter, let color): state.tiles.contains(letter + "\u{0}" + color)
            }
        }
        let (isKnown, mayRead) = state.withLock { state in
            (known(state), state.read.map { ContinuousClock.now - $0 >= .seconds(1) } ?? true)
        }
        if isKnown || !mayRead { return isKnown }
        state.withLock { $0.read = .now }
        guard
            let (magnets, tiles) = try? await board.read({ file in
                let board = try file.current().board
                return (
                    Set(board.magnets.keys.map(\.description)), Set(board.tray.map { $0.letter + "\u{0}" + $0.color })
                )
            })
        else { return false }
        return state.withLock { state in
            state.magnets = magnets
            state.tiles = tiles
            return known(state)
        }
    }

    /// The refusal's message, or nil when one was sent less than a second ago.
    private func refuse(_ why: String) -> String? {
        state.withLock { state in
            let now = ContinuousClock.now
            if let last = state.lastRefusal, now - last < .seconds(1) { return nil }
            state.lastRefusal = now
            return HandMessage.refused(why)
        }
    }

    /// Whether the page joined and has said nothing for `silence`.
    func silent(for silence: Duration) -> Bool {
        state.withLock { $0.name != nil && ContinuousClock.now - $0.heard > silence }
    }
}
