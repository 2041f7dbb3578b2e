import Foundation

/// Phase timings on stderr when `MAGNETS_TRACE` is set: how long each step of a sync or an
/// import took, for performance work.
struct Trace {
    static let enabled = getenv("MAGNETS_TRACE").map { $0.pointee != 0 } ?? false
    var last = DispatchTime.now().uptimeNanoseconds

    init() { _ = Trace.start }
    /// When the process made its first trace: each mark also says how long after it it came.
    static let start = DispatchTime.now().uptimeNanoseconds

    mutating func mark(_ phase: @autoclosure () -> String) {
        guard Trace.enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        // The calling thread's CPU time so far: what a step costs, whatever else the cores do.
        var cpu = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)
        let cpuMS = Double(cpu.tv_sec) * 1e3 + Double(cpu.tv_nsec) / 1e6
        FileHandle.standardError.write(Data(String(format: "trace: %8.1f ms  (at %7.1f, thread cpu %6.1f)  %@\n", Double(now - last) / 1e6,
                                                   Double(now) / 1e6 - Double(Trace.start) / 1e6, cpuMS, phase()).utf8))
        last = now
    }
}
