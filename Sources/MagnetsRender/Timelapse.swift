import Foundation
import MagnetsCore

/// One self-contained HTML page that plays a board's history frame by frame: a slider, play and
/// pause, and each op's description. It works offline in any browser.
public enum Timelapse {
    /// One frame: the board after an op, and what that op did.
    public struct Frame: Sendable {
        public var board: Board
        public var caption: String

        public init(board: Board, caption: String) {
            self.board = board
            self.caption = caption
        }
    }

    public static func render(title: String, frames: [Frame]) -> String {
        let items = frames.map { frame in
            JSONValue.object([("svg", .string(SVGPicture.render(frame.board))), ("caption", .string(frame.caption))])
        }
        // JSON inside <script>: "</" must not appear, nor the line separators JS once rejected.
        let data = JSONValue.array(items).serialized()
            .replacingOccurrences(of: "</", with: "<\\/")
            .replacingOccurrences(of: "<!--", with: "<\\!--")
        return """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>\(SVGPicture.escape(title))</title>
        <style>
        body { font-family: Helvetica, Arial, sans-serif; margin: 24px; background: #faf8f3; color: #2b2b2b; }
        #stage svg { max-width: 100%; height: auto; border-radius: 8px; box-shadow: 0 2px 10px #0002; }
        .controls { display: flex; gap: 12px; align-items: center; margin: 12px 0; }
        #slider { flex: 1; }
        #caption { font-family: Menlo, monospace; font-size: 14px; min-height: 2.5em; }
        button { font-size: 15px; padding: 4px 14px; }
        </style>
        </head>
        <body>
        <h1>\(SVGPicture.escape(title))</h1>
        <div class="controls"><button id="play">▶ play</button><input id="slider" type="range" min="0" max="\(max(0, frames.count - 1))" value="0"><span id="counter"></span></div>
        <div id="caption"></div>
        <div id="stage"></div>
        <script id="frames" type="application/json">\(data)</script>
        <script>
        const frames = JSON.parse(document.getElementById('frames').textContent);
        const slider = document.getElementById('slider'), stage = document.getElementById('stage');
        const caption = document.getElementById('caption'), counter = document.getElementById('counter');
        const play = document.getElementById('play');
        let timer = null;
        function show(i) {
          if (!frames.length) { caption.textContent = 'no ops'; return; }
          slider.value = i; stage.innerHTML = frames[i].svg;
          caption.textContent = frames[i].caption; counter.textContent = (Number(i) + 1) + ' / ' + frames.length;
        }
        slider.addEventListener('input', () => show(slider.value));
        play.addEventListener('click', () => {
          if (timer) { clearInterval(timer); timer = null; play.textContent = '▶ play'; return; }
          play.textContent = '❚❚ pause';
          timer = setInterval(() => {
            const next = Number(slider.value) + 1;
            if (next >= frames.length) { clearInterval(timer); timer = null; play.textContent = '▶ play'; return; }
            show(next);
          }, 700);
        });
        show(0);
        </script>
        </body>
        </html>

        """
    }
}
