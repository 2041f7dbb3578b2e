import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Whole-process measurements: wall time and peak resident memory of a child process.
enum Measure {
    struct Run {
        var seconds: Double
        var peakMiB: Double
        var status: Int32
        /// Processor time, user and system, of all its threads: on a busy machine it moves less
        /// than wall time does with the work that is not the child's.
        var cpuSeconds: Double = .nan
    }

    /// Runs `executable` with `arguments`, output discarded, and returns its wall time, processor
    /// time and peak RSS.
    static func spawn(_ executable: String, _ arguments: [String]) -> Run {
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        // The child reports its own peak (rusage would include this process's memory, which the
        // child shares until its exec).
        let peakFile = FileManager.default.temporaryDirectory.appendingPathComponent("magnets-peak-\(getpid())").path
        unlink(peakFile)
        var environment = ProcessInfo.processInfo.environment
        environment["MAGNETS_PEAK_FILE"] = peakFile
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for entry in envp { free(entry) } }
        let start = DispatchTime.now().uptimeNanoseconds
        guard posix_spawn(&pid, executable, &actions, nil, argv, envp) == 0 else {
            return Run(seconds: .nan, peakMiB: .nan, status: -1)
        }
        var status: Int32 = 0
        var usage = rusage()
        wait4(pid, &status, 0, &usage)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let peak = (try? String(contentsOfFile: peakFile, encoding: .utf8)).flatMap { Double($0) } ?? .nan
        unlink(peakFile)
        let cpu =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return Run(seconds: seconds, peakMiB: peak / 1024, status: (status >> 8) & 0xFF, cpuSeconds: cpu)
    }

    /// Runs `executable` with `arguments` and returns what it printed (standard output and error).
    static func output(_ executable: String, _ arguments: [String]) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// The value below which a share `q` of `values` lie (nearest rank).
    static func quantile(_ values: [Double], _ q: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
    }

    /// The `magnets` binary built next to this one.
    static var magnetsBinary: String {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent("magnets").path
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
    }

    /// Process `pid`'s resident set now, in MiB, from /proc (NaN when it cannot be read).
    static func residentMiB(_ pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kB = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return .nan }
        return kB / 1024
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
}
