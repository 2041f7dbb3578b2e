import MagnetsCore
import Testing

/// The direct writer must give the very bytes of the `JSONValue` forms: history's output (and
/// anything that reads it) depends on them.
@Suite("JSON writer")
struct JSONWriterTests {
    /// A seeded generator (SplitMix64), so a failure can be replayed.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
        }
        mutating func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }

        /// Whole, fractional, tiny, huge, negative and odd numbers.
        mutating func number() -> Double {
            switch int(0...9) {
            case 0: return Double(int(-1000...1000)) + Double(int(0...99)) / 100
            case 1: return Double(bitPattern: next())  // anything: NaN, infinities, subnormals
            case 2:
                return pick([
                    0, -0.0, 1e15, -1e15, 999_999_999_999_999, 1e15 + 2, 0.1, 1e-7, .leastNonzeroMagnitude,
                    .greatestFiniteMagnitude,
                ])
            case 3: return Double(int(-2_000_000...2_000_000)) / 7
            default: return Double(int(-5000...5000))
            }
        }
        mutating func point() -> Point { Point(x: number(), y: number()) }
        mutating func size() -> Size { Size(width: number(), height: number()) }

        /// Text with the characters that need escapes, and letters outside ASCII.
        mutating func text() -> String {
            let pieces = [
                "a", "Z", "zone 1", "é", "ß", "😀", "日本", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{1F}",
                "\u{7F}", "\u{80}", "\u{2028}", "\u{2029}", "\u{2027}", "\u{202A}", "\u{E2}", "/", " ", "{", "e\u{301}",
                "\u{FEFF}",
            ]
            return (0..<int(0...6)).map { _ in pick(pieces) }.joined()
        }
        mutating func replica() -> String { pick(["a", "alice", "bob", "base", "z9", "b-2", "x_y", "r\u{e9}"]) }
        mutating func magnet() -> MagnetID { MagnetID(replica: replica(), seq: int(-3...1_000_000_000)) }
        mutating func count() -> Int {
            pick([0, 1, 7, -1, 1_000_000_000_000_000, -1_000_000_000_000_001, Int.max, Int.min, int(0...500)])
        }
        mutating func target() -> Target {
            int(0...1) == 0 ? .point(point()) : .path((0..<int(0...4)).map { _ in point() })
        }

        mutating func payload() -> Payload {
            switch int(0...9) {
            case 0: return .createBoard(name: text(), size: size())
            case 1: return .resize(size())
            case 2: return .trayAdd(letter: text(), color: text(), size: size(), count: int(0...1) == 0 ? nil : count())
            case 3:
                let accepts: [String]? = int(0...1) == 0 ? nil : (0..<int(0...3)).map { _ in text() }
                return .zoneAdd(
                    Zone(
                        name: text(), rect: Rect(x: number(), y: number(), width: number(), height: number()),
                        capacity: count(), accepts: accepts))
            case 4: return .zoneRemove(name: text())
            case 5: return .boundaryAdd(Boundary(name: text(), segment: Segment(from: point(), to: point())))
            case 6: return .boundaryRemove(name: text())
            case 7: return .pull(letter: text(), color: text(), target: target())
            case 8: return .move(magnet: magnet(), target: target())
            default: return .returnMagnet(magnet())
            }
        }

        mutating func event() -> Event {
            switch int(0...15) {
            case 0: return .created(name: text(), size: size())
            case 1: return .resized(size())
            case 2: return .constrained(magnet: magnet(), at: point())
            case 3: return .stocked(letter: text(), color: text(), remaining: int(0...1) == 0 ? nil : count())
            case 4: return .zoneAdded(text())
            case 5: return .zoneRemoved(text())
            case 6: return .boundaryAdded(text())
            case 7: return .boundaryRemoved(text())
            case 8: return .pulled(magnet: magnet(), letter: text(), color: text(), at: point())
            case 9: return .moved(magnet: magnet(), to: point())
            case 10: return .contact(boundary: text(), at: point())
            case 11: return .capture(zone: text(), at: point())
            case 12: return .recapture(zone: text(), at: point())
            case 13: return .escape(magnet: magnet(), zone: text(), at: point())
            case 14: return .returned(magnet: magnet(), letter: text(), color: text())
            default: return .rejected(reason: text())
            }
        }

        mutating func time() -> Int64 {
            pick([
                0, -1, 999, -86_400_001, 1_700_000_000_123, 253_402_300_799_999, 253_402_300_800_000,
                -62_135_596_800_001,
                -9_000_000_000_000_000, 9_000_000_000_000_000, Int64(int(-100_000_000_000_000...100_000_000_000_000)),
            ])
        }

        mutating func op() -> Operation {
            var context: [String: Int] = [:]
            for _ in 0..<int(0...4) { context[replica()] = int(1...1_000_000) }
            return Operation(
                id: OpID(replica: replica(), seq: int(1...2_000_000)), lamport: int(1...3_000_000),
                context: VectorClock(context), author: text().isEmpty ? "me" : text(), time: time(),
                payload: payload())
        }
    }

    func text(_ writer: borrowing JSONWriter) -> String { String(decoding: writer.bytes, as: UTF8.self) }

    @Test("numbers and strings as JSONValue writes them")
    func values() {
        var random = Random(state: 1)
        for _ in 0..<20_000 {
            let n = random.number()
            var json = JSONWriter()
            json.number(n)
            #expect(text(json) == JSONValue.number(n).serialized(), "\(n)")
            let i = random.count()
            json.removeAll()
            json.int(i)
            #expect(text(json) == JSONValue.int(i).serialized(), "\(i)")
            let s = random.text()
            json.removeAll()
            json.string(s)
            #expect(text(json) == JSONValue.string(s).serialized(), "\(s.unicodeScalars.map(\.value))")
        }
    }

    @Test("every byte below 0x80 and the line separators are escaped alike, the buffer growing from one byte")
    func escapes() {
        let all = String(decoding: Array(0..<128 as Range<UInt8>), as: UTF8.self) + "\u{2028}x\u{2029}\u{2028}"
        var json = JSONWriter(capacity: 1)
        json.string(all)
        #expect(text(json) == JSONValue.string(all).serialized())
    }

    @Test("events as Event.json serialized")
    func events() {
        var random = Random(state: 2)
        for _ in 0..<20_000 {
            let event = random.event()
            var writer = OpJSONWriter()
            writer.write(event)
            #expect(text(writer.json) == event.json.serialized(), "\(event)")
        }
    }

    @Test("ops with events, in both time styles, as Operation.json serialized")
    func ops() {
        var random = Random(state: 3)
        var writer = OpJSONWriter()
        var expected = ""
        var previous: Operation?
        for k in 0..<20_000 {
            var op = random.op()
            // Runs of ops sharing a context, as a log holds them, and a context naming the op's
            // own replica (an op built field by field may).
            if let previous, k % 3 != 0 { op.context = previous.context }
            if k % 50 == 0 { op.context = VectorClock(op.context.entries.merging([op.id.replica: 5]) { $1 }) }
            previous = op
            let events: [Event]? = k % 4 == 0 ? nil : (0..<random.int(0...3)).map { _ in random.event() }
            let style: Operation.TimeStyle = k % 5 == 0 ? .milliseconds : .iso8601
            writer.write(op, time: style, events: events)
            writer.json.byte(UInt8(ascii: "\n"))
            expected += op.json(time: style, events: events).serialized() + "\n"
            if k % 1000 == 999 {
                #expect(text(writer.json) == expected)
                writer.json.removeAll()
                expected = ""
            }
        }
    }

    /// The form `Timestamp.iso8601` had before it wrote through `JSONWriter`.
    static func formerISO8601(_ ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = Int(ms - seconds * 1000)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secs = Int(seconds - days * 86_400)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ v: some BinaryInteger, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return
            "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secs / 3600, 2)):\(pad(secs / 60 % 60, 2)):\(pad(secs % 60, 2)).\(pad(millis, 3))Z"
    }

    @Test("times as before, from year -285 million to +285 million")
    func times() {
        var random = Random(state: 4)
        #expect(Timestamp.iso8601(milliseconds: 1_795_467_845_123) == "2026-11-23T21:04:05.123Z")
        for _ in 0..<50_000 {
            let ms = random.int(0...3) == 0 ? random.time() : Int64(bitPattern: random.next()) % 9_000_000_000_000_000
            #expect(Timestamp.iso8601(milliseconds: ms) == Self.formerISO8601(ms), "\(ms)")
        }
    }
}
