import MagnetsCore

/// One self-contained HTML page that replays a board's history: the board after each op (drawn
/// by ``SVGPicture``), a slider to scrub through the frames, play/pause, and the caption of the
/// frame shown. CSS and JavaScript are inline and nothing is fetched, so the page works offline
/// in any browser; without JavaScript it still shows the last frame.
///
/// The frames travel as JSON inside a `<script type="application/json">` element, with `<`, `>`
/// and `&` escaped, so no caption or name can end the script (`</script>`) or inject markup;
/// captions are shown with `textContent`. The page starts on the last frame; play from the last
/// frame starts again at the first. Keys: ← → step, space plays or pauses, Home / End jump.
/// Each frame carries the magnet its op changed (`"magnet"`, or `null`) and the path the op
/// dragged it along (`"path"`: `[[x, y], …]`, see ``Trace``); its picture (`"svg"`, exactly
/// `render --svg --at N`) is shown with the trace's two layers added (`"under"`: the drag path,
/// put under the magnets; `"over"`: a ring around the magnet, on top).
///
/// ```swift
/// let frames = boards.map { Timelapse.Frame(board: $0.board, caption: $0.caption) }
/// let html = Timelapse.render(title: "fridge — 12 ops", frames: frames)
/// ```
public enum Timelapse {
    /// One step of the replay: the board after an op, and what that op did.
    public struct Frame: Hashable, Sendable {
        /// The board after the op.
        public var board: Board
        /// The op's description, e.g. `alice:3 magnet.move alice-2 → 430,130 — captured by zone 'slot'`.
        public var caption: String
        /// `true` when the rules rejected the op (the board is unchanged): the page marks the step.
        public var rejected: Bool
        /// The magnet the op pulled, moved or returned and the path it was dragged along: the
        /// frame's picture highlights it.
        public var trace: Trace?
        /// `true` when the op is an undo (or a redo): the page marks the step as one.
        public var undo: Bool

        /// A frame showing `board` with `caption` under it.
        public init(board: Board, caption: String, rejected: Bool = false, trace: Trace? = nil, undo: Bool = false) {
            self.board = board
            self.caption = caption
            self.rejected = rejected
            self.trace = trace
            self.undo = undo
        }

        /// The frame of `op`, applied to `before` with `outcome`, giving `after`: its trace
        /// highlights the magnet the op changed and its drag path.
        public init(op: MagnetsCore.Operation, outcome: Outcome, before: Board, after: Board, caption: String) {
            self.init(
                board: after, caption: caption, rejected: outcome.isRejected,
                trace: Trace(op: op, outcome: outcome, before: before, after: after), undo: op.kind == .undo)
        }
    }

    /// The most frames a page holds. Each frame carries the board's whole picture, so a page of
    /// every op of a long history would take gigabytes to build and no browser could open it;
    /// the page of a longer replay shows its last ops.
    public static let maximumFrames = 200

    /// Which ops (their 1-based places in the replay order) the page of a replay of `ops` ops
    /// shows: the last `maximumFrames` (nil for none).
    public static func shownOps(of ops: Int) -> ClosedRange<Int>? {
        ops > 0 ? max(1, ops - maximumFrames + 1)...ops : nil
    }

    /// The HTML page for `frames` in order, titled `title`.
    ///
    /// - Complexity: O(total size of the frames' SVG pictures).
    public static func render(title: String, frames: [Frame]) -> String {
        let data = JSONValue.array(
            frames.map { frame in
                let (under, over) = layers(frame)
                return .object([
                    ("caption", .string(frame.caption)), ("rejected", .bool(frame.rejected)),
                    ("undo", .bool(frame.undo)),
                    ("magnet", frame.trace.map { .string($0.magnet.description) } ?? .null),
                    ("path", .array((frame.trace?.path ?? []).map(JSONValue.point))),
                    ("svg", .string(SVGPicture.element(frame.board))),
                    ("under", .string(under)), ("over", .string(over)),
                ])
            })
        let last = frames.last
        let count = frames.count
        let shownTitle = Markup.escape(title.isEmpty ? "magnets" : title)

        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="magnets">
            <title>\(shownTitle)</title>
            <style>
            \(style)
            </style>
            </head>
            <body>
            <main>
            <header><h1>\(shownTitle)</h1><span class="count">\(count) \(count == 1 ? "frame" : "frames")</span></header>
            <figure id="stage">\(last.map { SVGPicture.element($0.board) } ?? "<p class=\"empty\">No frames to show.</p>")</figure>
            <div class="controls">
            <button id="play" type="button" aria-label="Play"\(count < 2 ? " disabled" : "")>▶</button>
            <input id="scrub" type="range" min="0" max="\(max(0, count - 1))" step="1" value="\(max(0, count - 1))" aria-label="Frame"\(count < 2 ? " disabled" : "")>
            <span id="counter">\(count == 0 ? "0 / 0" : "\(count) / \(count)")</span>
            <select id="speed" aria-label="Speed"><option value="0.5">½×</option><option value="1" selected>1×</option><option value="2">2×</option><option value="4">4×</option></select>
            </div>
            <p id="caption">\(Markup.escape(last?.caption ?? ""))</p>
            <ol id="steps"></ol>
            </main>
            <script type="application/json" id="magnets-frames">
            """
        html += Markup.scriptJSON(data)
        html += "</script>\n<script>\n" + script + "</script>\n</body>\n</html>\n"
        return html
    }

    /// The frame's trace drawn as two layers of its picture (see ``SVGPicture/traceLayers(_:trace:)``).
    static func layers(_ frame: Frame) -> (under: String, over: String) {
        frame.trace.map { SVGPicture.traceLayers(frame.board, trace: $0) } ?? ("", "")
    }

    // MARK: - Page parts

    static let style = """
        :root { color-scheme: light; }
        body { margin: 0; background: #f4f1ea; color: #2f2b25;
          font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
        main { max-width: 1080px; margin: 0 auto; padding: 20px 24px 40px; }
        header { display: flex; align-items: baseline; gap: 12px; }
        h1 { font-size: 20px; margin: 0 0 12px; overflow-wrap: anywhere; }
        .count { color: #7a7366; font-size: 13px; }
        #stage { margin: 0; background: #ebe7df; border-radius: 10px; overflow: hidden;
          box-shadow: 0 1px 3px rgba(0,0,0,.12), 0 6px 24px rgba(0,0,0,.06); }
        #stage svg { display: block; width: 100%; height: auto; max-height: 78vh; }
        .empty { padding: 48px; text-align: center; color: #7a7366; }
        .controls { display: flex; align-items: center; gap: 12px; margin: 14px 0 6px; }
        #scrub { flex: 1; accent-color: #3f6fa8; }
        button { font: inherit; font-size: 16px; width: 44px; height: 34px; border-radius: 8px; cursor: pointer;
          border: 1px solid #c8c1b3; background: #fdfcf8; color: #2f2b25; }
        button:disabled { opacity: .4; cursor: default; }
        select { font: inherit; border-radius: 6px; border: 1px solid #c8c1b3; background: #fdfcf8; padding: 4px; }
        #counter { font-variant-numeric: tabular-nums; color: #5d574c; min-width: 6em; text-align: right; }
        #caption { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 14px;
          background: #fdfcf8; border: 1px solid #ddd7cb; border-radius: 8px; padding: 10px 12px; margin: 6px 0 14px;
          min-height: 1.45em; white-space: pre-wrap; overflow-wrap: anywhere; }
        #steps { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px;
          max-height: 240px; overflow: auto; margin: 0; padding: 6px 6px 6px 3.2em; background: #fdfcf8;
          border: 1px solid #ddd7cb; border-radius: 8px; }
        #steps li { cursor: pointer; padding: 1px 4px; border-radius: 4px; white-space: pre-wrap; overflow-wrap: anywhere; }
        #steps li:hover { background: #efebe3; }
        #steps li.current { background: #dfe8f3; }
        #steps li.rejected, #caption.rejected { color: #9a3b2e; }
        #steps li.rejected::before, #caption.rejected::before { content: "✕ rejected · "; font-weight: 600; }
        #steps li.undo, #caption.undo { font-style: italic; }
        #steps li.undo:not(.rejected)::before, #caption.undo:not(.rejected)::before { content: "↶ undo · "; font-weight: 600; }
        """

    static let script = """
        (function () {
          "use strict";
          var frames = JSON.parse(document.getElementById("magnets-frames").textContent);
          var stage = document.getElementById("stage");
          var scrub = document.getElementById("scrub");
          var play = document.getElementById("play");
          var speed = document.getElementById("speed");
          var counter = document.getElementById("counter");
          var caption = document.getElementById("caption");
          var steps = document.getElementById("steps");
          if (frames.length === 0) { steps.hidden = true; return; }
          var items = [];
          // A step's classes: rejected, undo (an undo or a redo), current.
          function classes(frame, current) {
            return [current ? "current" : "", frame.rejected ? "rejected" : "", frame.undo ? "undo" : ""]
              .filter(Boolean).join(" ");
          }
          frames.forEach(function (frame, i) {
            var li = document.createElement("li");
            li.textContent = frame.caption;
            li.className = classes(frame, false);
            li.addEventListener("click", function () { stop(); show(i); });
            steps.appendChild(li);
            items.push(li);
          });
          var current = -1, timer = null;
          function show(i) {
            i = Math.max(0, Math.min(frames.length - 1, i));
            if (i !== current) {
              stage.innerHTML = frames[i].svg;
              // The step's trace: its drag path under the magnets, a ring over them.
              var svg = stage.querySelector("svg");
              if (svg && frames[i].under) {
                var magnets = svg.querySelector("g.magnets");
                if (magnets) { magnets.insertAdjacentHTML("beforebegin", frames[i].under); }
                else { svg.insertAdjacentHTML("beforeend", frames[i].under); }
              }
              if (svg && frames[i].over) { svg.insertAdjacentHTML("beforeend", frames[i].over); }
              if (current >= 0) { items[current].className = classes(frames[current], false); }
              items[i].className = classes(frames[i], true);
              // Keep the current step in view by scrolling the list alone (scrollIntoView would
              // scroll the whole page too, away from the board).
              var item = items[i], top = item.offsetTop - steps.offsetTop;
              if (top < steps.scrollTop) { steps.scrollTop = top; }
              else if (top + item.offsetHeight > steps.scrollTop + steps.clientHeight) {
                steps.scrollTop = top + item.offsetHeight - steps.clientHeight;
              }
            }
            current = i;
            scrub.value = String(i);
            counter.textContent = (i + 1) + " / " + frames.length;
            caption.textContent = frames[i].caption;
            caption.className = classes(frames[i], false);
          }
          function delay() { return 700 / (parseFloat(speed.value) || 1); }
          function tick() {
            if (current >= frames.length - 1) { stop(); return; }
            show(current + 1);
            timer = setTimeout(tick, delay());
          }
          function start() {
            if (frames.length < 2) { return; }
            if (current >= frames.length - 1) { show(0); }
            play.textContent = "❚❚"; play.setAttribute("aria-label", "Pause");
            timer = setTimeout(tick, delay());
          }
          function stop() {
            if (timer !== null) { clearTimeout(timer); timer = null; }
            play.textContent = "▶"; play.setAttribute("aria-label", "Play");
          }
          play.addEventListener("click", function () { if (timer === null) { start(); } else { stop(); } });
          scrub.addEventListener("input", function () { stop(); show(parseInt(scrub.value, 10) || 0); });
          document.addEventListener("keydown", function (event) {
            if (event.target && event.target.tagName === "SELECT") { return; }
            if (event.key === "ArrowRight") { stop(); show(current + 1); event.preventDefault(); }
            else if (event.key === "ArrowLeft") { stop(); show(current - 1); event.preventDefault(); }
            else if (event.key === "Home") { stop(); show(0); event.preventDefault(); }
            else if (event.key === "End") { stop(); show(frames.length - 1); event.preventDefault(); }
            else if (event.key === " " && event.target === document.body) {
              if (timer === null) { start(); } else { stop(); }
              event.preventDefault();
            }
          });
          show(frames.length - 1);
        })();

        """
}
