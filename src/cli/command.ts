import type { OptionSpecs, Parsed } from "./args.js";

/** One `tickwork` command (or subcommand: "jobs list"). */
export interface Command {
  /** As typed after `tickwork`: "status", "jobs list". */
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The arguments after the name in the usage line, e.g. "<id>... [options]". */
  args: string;
  /** The help text's paragraph. */
  description: string;
  options: OptionSpecs;
  /** Runs the command and returns the exit code; errors are reported by the caller. */
  run(parsed: Parsed): Promise<number>;
}
