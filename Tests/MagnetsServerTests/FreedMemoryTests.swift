import Foundation
import MagnetsHosting
import Testing

@Suite("Freed memory given back")
struct FreedMemoryTests {
    /// The process's resident set in MiB, from /proc.
    static func residentMiB() -> Double {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "") ?? .nan) / 1024
    }

    @Test("256 MiB freed among blocks still in use goes back to the system once something was released")
    func givesBack() {
        // 1 KiB blocks, one in sixteen kept: the freed ones cannot merge into the top of the
        // heap, so `free` alone returns none of their pages (run alone, RSS went from 308 to
        // 307 MiB on `free`, then to 120 on `giveBack`: a page holding a kept block stays).
        var blocks = (0..<262_144).map { [UInt8](repeating: UInt8($0 & 0xFF), count: 1024) }
        let full = Self.residentMiB()
        blocks = blocks.enumerated().filter { $0.offset % 16 == 0 }.map(\.element)
        let freed = Self.residentMiB()
        FreedMemory.noteReleased()
        FreedMemory.giveBack()
        let givenBack = Self.residentMiB()
        #expect(blocks.count == 16_384)
        #expect(full - givenBack > 128, "RSS \(full) MiB full, \(freed) freed, \(givenBack) given back")
    }
}
