import MagnetsCore
import NIOCore

/// The messages of hands and presence on the live connection (PROTOCOL.md, "Hands and who is
/// here"): what a page may send, read and checked here, and what the server sends, encoded once
/// for every reader. Hands are not ops: nothing here is stored or synced.
package enum HandMessage: Equatable {
    /// The page is on the board under `name` (read-only viewers too); sent again to rename.
    case join(name: String)
    /// The page is still here (every few seconds; a page silent for `PresenceRules.silence`
    /// leaves the list).
    case here
    /// Where the page's hand holds something now.
    case hand(Holding, x: Double, y: Double)
    /// The hand let go: `released` (a command follows, whose outcome takes over) or
    /// `cancelled` (the drag was given up: the magnet goes back).
    case gone(released: Bool)

    /// What a hand holds: a magnet on the board, or a letter being pulled out of the tray.
    package enum Holding: Equatable {
        case magnet(String)
        case tile(letter: String, color: String)
    }

    /// The most bytes a page's hand or presence message may have.
    package static let maxSize = 1024

    /// A page's hand or presence message read from a text message of the live connection:
    /// nil when the text is none of these (it goes to the exchange), else the message or why it
    /// is refused.
    package static func read(_ text: String) -> Result<HandMessage, HandRefusal>? {
        guard let json = try? JSONParser.parse(text, maxDepth: 8), case .object = json,
            let type = json["type"]?.stringValue, ["hand", "join", "here"].contains(type)
        else { return nil }
        guard text.utf8.count <= maxSize else {
            return .failure(HandRefusal("a \(type) message is over \(maxSize) bytes"))
        }
        return Result { () throws(HandRefusal) in try HandMessage(type: type, json) }
    }

    private init(type: String, _ json: JSONValue) throws(HandRefusal) {
        switch type {
        case "here": self = .here
        case "join":
            guard let name = json["name"]?.stringValue, Self.isName(name) else {
                throw HandRefusal("a join message needs a \"name\" of 1–64 characters without control characters")
            }
            self = .join(name: name)
        default:
            if let gone = json["gone"]?.stringValue {
                guard gone == "released" || gone == "cancelled" else {
                    throw HandRefusal("a hand's \"gone\" is \"released\" or \"cancelled\"")
                }
                self = .gone(released: gone == "released")
                return
            }
            let limit = Validation.coordinateLimit
            guard let x = json["x"]?.doubleValue, let y = json["y"]?.doubleValue, x.isFinite, y.isFinite,
                abs(x) <= limit, abs(y) <= limit
            else { throw HandRefusal("a hand needs \"x\" and \"y\": finite numbers within ±1,000,000") }
            if let magnet = json["magnet"]?.stringValue {
                guard (1...160).contains(magnet.utf8.count) else { throw HandRefusal("a hand's \"magnet\" is no id") }
                self = .hand(.magnet(magnet), x: x, y: y)
            } else if let letter = json["letter"]?.stringValue, let color = json["color"]?.stringValue,
                (1...64).contains(letter.utf8.count), (1...32).contains(color.utf8.count)
            {
                self = .hand(.tile(letter: letter, color: color), x: x, y: y)
            } else {
                throw HandRefusal("a hand holds a \"magnet\" (its id) or a \"letter\" and \"color\" (a tray pull)")
            }
        }
    }

    /// 1–64 characters, none a control character (as `--as`).
    package static func isName(_ name: String) -> Bool {
        (1...64).contains(name.count) && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    // MARK: - What the server sends

    /// `{"type":"hand","person":P,"name":N, …the hand…}` for every other page.
    package static func frame(person: String, name: String, _ message: HandMessage) -> ByteBuffer {
        var object: [(String, JSONValue)] = [
            ("type", .string("hand")), ("person", .string(person)), ("name", .string(name)),
        ]
        switch message {
        case .hand(.magnet(let id), let x, let y):
            object += [("magnet", .string(id)), ("x", .number(x)), ("y", .number(y))]
        case .hand(.tile(let letter, let color), let x, let y):
            object += [("letter", .string(letter)), ("color", .string(color)), ("x", .number(x)), ("y", .number(y))]
        case .gone(let released): object.append(("gone", .string(released ? "released" : "cancelled")))
        case .join, .here: break
        }
        return ByteBuffer(string: JSONValue.object(object).serialized())
    }

    /// `{"type":"hands","hands":[HAND, …]}`: several people's hands that waited together for a
    /// reader, in one message (each HAND as `frame` makes it).
    package static func hands(_ frames: [ByteBuffer]) -> ByteBuffer {
        var out = ByteBuffer()
        out.reserveCapacity(frames.reduce(24) { $0 + $1.readableBytes + 1 })
        out.writeString(#"{"type":"hands","hands":["#)
        for (index, frame) in frames.enumerated() {
            if index > 0 { out.writeString(",") }
            out.writeImmutableBuffer(frame)
        }
        out.writeString("]}")
        return out
    }

    /// `{"type":"present","people":[{"person","name","access"}, …]}`.
    package static func presence(_ people: [EventHub.Present]) -> ByteBuffer {
        let list = people.map { entry in
            JSONValue.object([
                ("person", .string(entry.id)), ("name", .string(entry.person.name)),
                ("access", .string(entry.person.mayWrite ? "write" : "read")),
            ])
        }
        return ByteBuffer(
            string: JSONValue.object([("type", .string("present")), ("people", .array(list))]).serialized())
    }

    /// `{"type":"joined","person":P}`: to the page that joined, its own id in the lists.
    package static func joined(_ person: String) -> String {
        JSONValue.object([("type", .string("joined")), ("person", .string(person))]).serialized()
    }

    /// `{"type":"hand-refused","error":…}`: to the page alone; its connection goes on.
    package static func refused(_ why: String) -> String {
        JSONValue.object([("type", .string("hand-refused")), ("error", .string(why))]).serialized()
    }

}

/// Why a page's hand or presence message was refused (said to that page alone).
package struct HandRefusal: Error, Equatable {
    package let message: String
    package init(_ message: String) { self.message = message }
}

/// How often a page may send hands, and how long a silent page stays listed.
package enum PresenceRules {
    /// A page sends at most 30 hands a second; more than this many in one second are dropped.
    package static let handsPerSecond = 60
    /// A page that sends nothing for this long leaves the list (and its connection is closed),
    /// so that a page gone without a word leaves the others' lists within 10 s (SPEC §8).
    package static let silence: Duration = .seconds(8)
    /// How often a process relays its list (pages say `here` every 2.5 s).
    package static let heartbeat: Duration = .seconds(3)
}
