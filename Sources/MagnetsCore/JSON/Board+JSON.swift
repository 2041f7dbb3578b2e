extension Board {
    /// `magnets` of `show --json`, by (replica, seq).
    public var magnetsJSON: JSONValue {
        .array(
            sortedMagnets.map { m in
                .object([
                    ("id", .string(m.id.description)), ("letter", .string(m.letter)), ("color", .string(m.color)),
                    ("x", .number(m.center.x)), ("y", .number(m.center.y)),
                    ("width", .number(m.size.width)), ("height", .number(m.size.height)),
                    ("zone", m.zone.map(JSONValue.string) ?? .null), ("z", .int(m.z)),
                ])
            })
    }

    /// `zones` of `show --json`, in creation order.
    public var zonesJSON: JSONValue {
        var members: [String: [MagnetID]] = [:]
        for m in magnets.values { if let z = m.zone { members[z, default: []].append(m.id) } }
        return .array(
            zones.map { z in
                .object([
                    ("name", .string(z.name)), ("x", .number(z.rect.minX)), ("y", .number(z.rect.minY)),
                    ("width", .number(z.rect.width)), ("height", .number(z.rect.height)),
                    ("capacity", .int(z.capacity)),
                    ("accepts", z.accepts.map { .array($0.map(JSONValue.string)) } ?? .null),
                    ("magnets", .array((members[z.name] ?? []).sorted().map { .string($0.description) })),
                ])
            })
    }

    /// `boundaries` of `show --json`, in creation order.
    public var boundariesJSON: JSONValue {
        .array(
            boundaries.map { b in
                .object([("name", .string(b.name)), ("from", .point(b.segment.from)), ("to", .point(b.segment.to))])
            })
    }

    /// `tray` of `show --json`, in the order tiles were first added.
    public var trayJSON: JSONValue {
        .array(
            tray.map { t in
                .object([
                    ("letter", .string(t.letter)), ("color", .string(t.color)),
                    ("width", .number(t.size.width)), ("height", .number(t.size.height)),
                    ("remaining", t.remaining.map { .int($0) } ?? .null),
                ])
            })
    }
}
