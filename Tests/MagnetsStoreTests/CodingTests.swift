import Foundation
import GRDB
import Testing

@testable import MagnetsCore
@testable import MagnetsStore

@Suite("Outcome encoding")
struct EventCodingTests {
    static let alice3 = MagnetID(replica: "alice", seq: 3)
    static let move = Operation(
        id: OpID(replica: "bob", seq: 9), lamport: 12, context: VectorClock(), author: "bob", time: 0,
        payload: .move(magnet: alice3, target: .point(Point(x: 430, y: 130))))

    @Test(
        "every event survives a round trip, with own magnets, repeated points, fractions and negatives",
        arguments: [
            [
                Event.capture(zone: "slot", at: Point(x: 430, y: 130)),
                .moved(magnet: alice3, to: Point(x: 430, y: 130)),
            ],
            [
                .constrained(magnet: alice3, at: Point(x: 980, y: -0.5)),
                .contact(boundary: "floor", at: Point(x: 500.25, y: 575)),
                .escape(magnet: alice3, zone: "z", at: Point(x: 500.25, y: 575)),
                .moved(magnet: alice3, to: Point(x: 500.25, y: 575)),
            ],
            [
                .escape(magnet: MagnetID(replica: "carol", seq: 70000), zone: "dock", at: Point(x: -3e9, y: 1e-7)),
                .stocked(letter: "🧲", color: "red", remaining: nil), .stocked(letter: "A", color: "blue", remaining: 0),
                .created(name: "fridge \"1\"", size: Size(width: 1000, height: 700)),
                .resized(Size(width: 12.5, height: 1)),
                .zoneAdded("a"), .zoneRemoved("b"), .boundaryAdded("c"), .boundaryRemoved("d"),
                .pulled(magnet: alice3, letter: "é", color: "green", at: Point(x: 1, y: 2)),
                .recapture(zone: "s", at: Point(x: 3, y: 4)),
                .returned(magnet: alice3, letter: "A", color: "red"), .rejected(reason: "tray empty: no 'A' red left"),
            ],
        ])
    func roundTrip(events: [Event]) throws {
        var labels = Labels()
        let bytes = EventCoding.encode(events, for: Self.move, labels: &labels)
        #expect(try EventCoding.decode(bytes[...], for: Self.move, names: labels.names) == events)
    }

    @Test("a capture or a contact and the move it ends take a few bytes; names are numbers")
    func compact() {
        var labels = Labels()
        let capture = EventCoding.encode(
            [
                .capture(zone: "slot", at: Point(x: 430, y: 130)),
                .moved(magnet: Self.alice3, to: Point(x: 430, y: 130)),
            ], for: Self.move, labels: &labels)
        #expect(capture.count <= 5)
        // A contact at a fractional point: the point's numbers, then one byte for the move.
        let contact = EventCoding.encode(
            [
                .contact(boundary: "a boundary with a long name", at: Point(x: 500.125, y: 575)),
                .moved(magnet: Self.alice3, to: Point(x: 500.125, y: 575)),
            ], for: Self.move, labels: &labels)
        #expect(contact.count == 1 + 1 + 1 + 9 + 2 + 1)  // tag, label, point tag, 500.125, 575, the move
        #expect(labels.ids == ["slot": 1, "a boundary with a long name": 2])
    }

    @Test("damaged bytes are an error, not a crash")
    func damaged() {
        var labels = Labels()
        let good = EventCoding.encode(
            [.contact(boundary: "floor", at: Point(x: 500.5, y: 575))], for: Self.move, labels: &labels)
        for cut in 0..<good.count {
            #expect(throws: (any Error).self) {
                try EventCoding.decode((Array(good[0..<cut]) + [0xFF])[...], for: Self.move, names: labels.names)
            }
        }
        #expect(throws: (any Error).self) {
            try EventCoding.decode(
                [3, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01][...], for: Self.move,
                names: labels.names)
        }
        // A label number the file does not know.
        #expect(throws: (any Error).self) { try EventCoding.decode(good[...], for: Self.move, names: Labels().names) }
        // "Moved to the point before" with no point before.
        #expect(throws: (any Error).self) { try EventCoding.decode([17][...], for: Self.move, names: labels.names) }
    }
}

@Suite("Outcome pages")
struct OutcomePageTests {
    static func key(_ lamport: Int, _ replica: Int64) -> OpKey { OpKey(lamport: lamport, replica: replica) }

    @Test("entries survive a round trip: steps in Lamport number, replica changes, equal Lamport numbers, long events")
    func roundTrip() throws {
        let entries = [
            OutcomePages.Entry(key: Self.key(7, 2), events: [1, 2, 3][...]),
            OutcomePages.Entry(key: Self.key(7, 5), events: [4][...]),
            OutcomePages.Entry(key: Self.key(9, 5), events: Array(repeating: 9, count: 300)[...]),
            OutcomePages.Entry(key: Self.key(1_000_000_000, 1), events: [17][...]),
        ]
        let blob = OutcomePages.encode(entries)
        #expect(try OutcomePages.decode(first: entries[0].key, blob) == entries)
        // One head byte, one length byte and the events, when the replica stays and the step is small.
        #expect(OutcomePages.encode(Array(entries[2...2])).count == 1 + 2 + 300)
    }

    @Test("a damaged page is an error, not a crash: cut inside an entry, keys not increasing, empty, overlong numbers")
    func damaged() throws {
        let entries = [
            OutcomePages.Entry(key: Self.key(3, 1), events: [1, 2][...]),
            OutcomePages.Entry(key: Self.key(4, 1), events: [3][...]),
        ]
        let blob = OutcomePages.encode(entries)
        // A cut between two entries leaves a shorter page that reads; `check` finds the lost outcomes.
        for cut in 1..<blob.count where cut != 4 {
            #expect(throws: (any Error).self) { try OutcomePages.decode(first: entries[0].key, Array(blob[0..<cut])) }
        }
        #expect(try OutcomePages.decode(first: entries[0].key, Array(blob[0..<4])) == [entries[0]])
        // Step 0, same replica.
        #expect(throws: (any Error).self) { try OutcomePages.decode(first: entries[0].key, blob + [0, 1, 5]) }
        #expect(throws: (any Error).self) { try OutcomePages.decode(first: entries[0].key, []) }
        #expect(throws: (any Error).self) {
            try OutcomePages.decode(
                first: entries[0].key, [0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        }
    }
}
