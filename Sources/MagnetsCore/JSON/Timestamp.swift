/// Wall times as ISO 8601 in UTC, with no Foundation needed.
public enum Timestamp {
    /// `2026-11-22T21:04:05.123Z` for milliseconds since 1970.
    public static func iso8601(milliseconds ms: Int64) -> String {
        var json = JSONWriter()
        write(milliseconds: ms, to: &json)
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Writes `iso8601(milliseconds:)`'s text, with no string made on the way (history writes
    /// one per op).
    public static func write(milliseconds ms: Int64, to json: inout JSONWriter) {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = Int(ms - seconds * 1000)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secs = Int(seconds - days * 86_400)
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        if year >= 0 {
            json.digits(UInt(year), width: 4)
        } else {
            // Years before 0 keep the form they always had: the sign counts in the 4 places.
            let text = String(year)
            for _ in text.utf8.count..<max(4, text.utf8.count) { json.byte(UInt8(ascii: "0")) }
            json.raw(utf8: text)
        }
        json.byte(UInt8(ascii: "-"))
        json.digits(UInt(month), width: 2)
        json.byte(UInt8(ascii: "-"))
        json.digits(UInt(day), width: 2)
        json.byte(UInt8(ascii: "T"))
        json.digits(UInt(secs / 3600), width: 2)
        json.byte(UInt8(ascii: ":"))
        json.digits(UInt(secs / 60 % 60), width: 2)
        json.byte(UInt8(ascii: ":"))
        json.digits(UInt(secs % 60), width: 2)
        json.byte(UInt8(ascii: "."))
        json.digits(UInt(millis), width: 3)
        json.byte(UInt8(ascii: "Z"))
    }
}
