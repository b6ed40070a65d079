// A full-screen view on the terminal with plain ANSI escapes (no curses library): the alternate
// screen, a hidden cursor, frames redrawn in place, and raw keys.

const ESC = "\u001b[";
const ENTER = `${ESC}?1049h${ESC}?25l`;
const LEAVE = `${ESC}?25h${ESC}?1049l`;
const QUIT_KEYS = new Set(["q", "Q", "\u0003"]);
const QUIT_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export class Screen {
  private render: (width: number, height: number) => string[] = () => [];
  private opened = false;
  private readonly cleanups: (() => void)[] = [];

  constructor(
    private readonly input: NodeJS.ReadStream,
    private readonly output: NodeJS.WriteStream,
  ) {}

  /**
   * Takes the terminal over; resolves with what ended it: a key (q, or Ctrl-C, which raw mode
   * delivers as a key) or a signal. `close()` gives the terminal back.
   */
  open(): Promise<string> {
    this.opened = true;
    this.output.write(ENTER);
    this.input.setRawMode(true);
    this.input.setEncoding("utf8");
    this.input.resume();
    const redraw = () => this.draw();
    this.output.on("resize", redraw);
    this.cleanups.push(() => this.output.off("resize", redraw));
    return new Promise((resolve) => {
      const onKey = (chunk: string) => {
        const key = [...chunk].find((c) => QUIT_KEYS.has(c));
        if (key !== undefined) resolve(key === "\u0003" ? "Ctrl-C" : key);
      };
      this.input.on("data", onKey);
      this.cleanups.push(() => this.input.off("data", onKey));
      for (const signal of QUIT_SIGNALS) {
        const onSignal = () => resolve(signal);
        process.on(signal, onSignal);
        this.cleanups.push(() => process.off(signal, onSignal));
      }
    });
  }

  /** Draws a frame now and again on each resize: `render` gets the terminal's size. */
  show(render: (width: number, height: number) => string[]): void {
    this.render = render;
    this.draw();
  }

  /** Gives the terminal back as it was: the normal screen, the cursor, cooked input. Safe to call twice. */
  close(): void {
    if (!this.opened) return;
    this.opened = false;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.input.setRawMode(false);
    this.input.pause();
    this.output.write(LEAVE);
  }

  private draw(): void {
    if (!this.opened) return;
    const lines = this.render(this.output.columns || 80, this.output.rows || 24);
    // Home, each line over the old one with the rest of it erased, then everything below erased:
    // no full clear, so the frame does not flicker.
    this.output.write(`${ESC}H${lines.map((line) => `${line}${ESC}K`).join("\r\n")}${ESC}J`);
  }
}
