import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { runCli, workdir } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const COMMANDS = ["start", "migrate", "status", "top", "jobs list", "jobs retry", "jobs cancel", "queues pause", "queues resume", "queues status", "tasks list", "tasks run", "tasks pause", "tasks resume", "deliveries purge"];

describe("tickwork --help and usage errors", () => {
  const work = workdir();
  afterAll(() => work.cleanup());
  const run = (args: string[]) => runCli(args, { cwd: work.dir });

  it("lists every command with --help, exit 0", async () => {
    const { code, stdout, stderr } = await run(["--help"]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout).toContain("Usage: tickwork <command> [options]");
    for (const command of COMMANDS) expect(stdout).toMatch(new RegExp(`^  ${command} +\\S`, "m"));
    expect(stdout).toContain("Exit codes: 0 done; 1 a failure at run time; 2 a usage error or a bad config file.");
  });

  it("prints the same list on stderr with exit 2 when no command is given", async () => {
    const { code, stdout, stderr } = await run([]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("Usage: tickwork <command> [options]");
  });

  it.each(COMMANDS)("tickwork %s --help shows its usage and options, exit 0", async (command) => {
    const { code, stdout, stderr } = await run([...command.split(" "), "--help"]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout).toMatch(new RegExp(`^Usage: tickwork ${command} `));
    expect(stdout).toContain("--db <file|url>");
    expect(stdout).toContain("-h, --help");
  });

  it.each(["jobs", "queues", "tasks"])("tickwork %s --help lists its subcommands", async (group) => {
    const { code, stdout } = await run([group, "--help"]);
    expect(code).toBe(0);
    for (const command of COMMANDS.filter((c) => c.startsWith(`${group} `))) expect(stdout).toContain(`  ${command} `);
    if (group === "tasks") expect(stdout).toContain("`tickwork tasks` alone runs `tickwork tasks list`.");
  });

  it("prints the version with --version", async () => {
    const { code, stdout } = await run(["--version"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^tickwork \d+\.\d+\.\d+\n$/);
  });

  it.each([
    { args: ["launch"], message: 'tickwork: unknown command "launch" (commands: start, migrate, status, top, jobs, queues, tasks, deliveries) (see: tickwork --help)' },
    { args: ["jobs"], message: "tickwork jobs: missing the subcommand: list, retry, cancel (see: tickwork jobs --help)" },
    { args: ["jobs", "purge"], message: 'tickwork jobs: unknown subcommand "purge" (jobs has list, retry, cancel) (see: tickwork jobs --help)' },
    { args: ["--db", "x.db", "status"], message: "tickwork: the command comes first: tickwork <command> [options], got --db (see: tickwork --help)" },
    { args: ["status", "--verbose"], message: "tickwork status: unknown option --verbose (see: tickwork status --help)" },
    { args: ["status", "--db"], message: "tickwork status: --db needs a value (see: tickwork status --help)" },
    { args: ["status", "extra"], message: 'tickwork status: unexpected argument "extra" (see: tickwork status --help)' },
    { args: ["status", "--log-level", "loud"], message: 'tickwork status: --log-level must be one of debug, info, warn, error, critical, got "loud" (see: tickwork status --help)' },
    { args: ["jobs", "list", "--status", "dead"], message: 'tickwork jobs list: --status must be one of pending, running, succeeded, failed, cancelled, got "dead" (see: tickwork jobs list --help)' },
    { args: ["jobs", "list", "--limit", "0"], message: 'tickwork jobs list: --limit must be an integer from 1 to 500, got "0" (see: tickwork jobs list --help)' },
    // A negative number is the option's value, refused for its range (Node's parser took it for an option).
    { args: ["jobs", "list", "--limit", "-5"], message: 'tickwork jobs list: --limit must be an integer from 1 to 500, got "-5" (see: tickwork jobs list --help)' },
    { args: ["jobs", "list", "--limit", "--json"], message: "tickwork jobs list: --limit needs a value, got the option --json (a value that starts with a dash is written --limit=-x) (see: tickwork jobs list --help)" },
    // A repeated option is refused, as the admin API refuses a repeated query parameter.
    { args: ["jobs", "list", "--limit", "10", "--limit", "20"], message: "tickwork jobs list: --limit: given 2 times; give it once (see: tickwork jobs list --help)" },
    { args: ["status", "--json", "--json"], message: "tickwork status: --json: given 2 times; give it once (see: tickwork status --help)" },
    { args: ["jobs", "list", "--state", "soon"], message: 'tickwork jobs list: --state must be one of due, scheduled, got "soon" (see: tickwork jobs list --help)' },
    { args: ["jobs", "list", "--state", "due", "--status", "failed"], message: "tickwork jobs list: --state due applies to pending jobs, and --status is failed: give one of them (see: tickwork jobs list --help)" },
    { args: ["jobs", "list", "--min-attempts", "-1"], message: 'tickwork jobs list: --min-attempts must be an integer from 0 to 2147483647, got "-1" (see: tickwork jobs list --help)' },
    { args: ["jobs", "list", "--min-attempts", "2147483648"], message: 'tickwork jobs list: --min-attempts must be an integer from 0 to 2147483647, got "2147483648" (see: tickwork jobs list --help)' },
    { args: ["jobs", "retry"], message: "tickwork jobs retry: missing job ids: give one or more, e.g. 42 (see: tickwork jobs retry --help)" },
    { args: ["jobs", "retry", "abc"], message: 'tickwork jobs retry: job ids: expected job ids (integers from 1 to 9223372036854775807), got "abc" (see: tickwork jobs retry --help)' },
    { args: ["jobs", "retry", "--failed"], message: "tickwork jobs retry: --failed needs --queue <name> (see: tickwork jobs retry --help)" },
    { args: ["jobs", "cancel", "7", "x"], message: 'tickwork jobs cancel: job ids: expected job ids (integers from 1 to 9223372036854775807), got "x" (see: tickwork jobs cancel --help)' },
    { args: ["queues"], message: "tickwork queues: missing the subcommand: pause, resume, status (see: tickwork queues --help)" },
    { args: ["queues", "pause"], message: "tickwork queues pause: missing the queue to pause (see: tickwork queues pause --help)" },
    { args: ["queues", "resume", "a", "b"], message: 'tickwork queues resume: unexpected argument "b" (see: tickwork queues resume --help)' },
    { args: ["queues", "status", "--groups", "many"], message: 'tickwork queues status: --groups must be an integer from 0 to 1000, got "many" (see: tickwork queues status --help)' },
    { args: ["queues", "status", "--group", "a"], message: "tickwork queues status: unknown option --group (see: tickwork queues status --help)" },
    { args: ["tasks", "run"], message: "tickwork tasks run: missing the task to run: a name from the config, or all (see: tickwork tasks run --help)" },
    { args: ["tasks", "pause"], message: "tickwork tasks pause: give how long to pause: --for <duration> (e.g. 2h) or --until <time>, one of them (see: tickwork tasks pause --help)" },
    { args: ["tasks", "pause", "--for", "soon"], message: "tickwork tasks pause: --for soon is not a duration: use e.g. 30s, 15m, 2h, 1d (see: tickwork tasks pause --help)" },
    { args: ["tasks", "pause", "--until", "2001-01-01T00:00:00Z"], message: "tickwork tasks pause: --until 2001-01-01T00:00:00Z is not in the future (see: tickwork tasks pause --help)" },
    { args: ["deliveries", "purge"], message: "tickwork deliveries purge: missing the delivery whose dead letters to delete (see: tickwork deliveries purge --help)" },
    { args: ["deliveries", "purge", "daily", "--all", "--older-than", "7d"], message: "tickwork deliveries purge: say which dead letters: --id <id>, --older-than <duration> or --all, one of them (see: tickwork deliveries purge --help)" },
    { args: ["deliveries", "purge", "daily", "--older-than", "a week"], message: "tickwork deliveries purge: --older-than a week is not a duration: use e.g. 12h, 7d (see: tickwork deliveries purge --help)" },
    { args: ["start", "--port", "http"], message: 'tickwork start: --port must be a port number from 0 to 65535, got "http" (see: tickwork start --help)' },
    { args: ["migrate", "--db", "./x.db", "--schema", "s"], message: "tickwork migrate: --schema applies to PostgreSQL only, and --db ./x.db is an SQLite file (see: tickwork migrate --help)" },
    // Taken for an SQLite path, a URL of another database would have become a file in a folder "mysql:".
    { args: ["migrate", "--db", "mysql://app:secret@db.internal/app"], message: 'tickwork migrate: --db mysql://app:***@db.internal/app: the scheme "mysql://" is not supported: give an SQLite file path or a postgres:// URL (see: tickwork migrate --help)' },
    { args: ["status", "--db", "sqlite://./x.db"], message: 'tickwork status: --db sqlite://./x.db: the scheme "sqlite://" is not supported: an SQLite database is given by its file path, e.g. --db ./tickwork.db (see: tickwork status --help)' },
    { args: ["tasks", "--limit", "3"], message: "tickwork tasks list: unknown option --limit (see: tickwork tasks list --help)" },
    { args: ["top", "--interval", "5ms"], message: 'tickwork top: --interval must be a duration from 200ms to 1h, e.g. 2s, got "5ms" (see: tickwork top --help)' },
    { args: ["top", "--interval", "-1s"], message: 'tickwork top: --interval must be a duration from 200ms to 1h, e.g. 2s, got "-1s" (see: tickwork top --help)' },
    // Its stdin and stdout are pipes here: top draws only on a terminal.
    { args: ["top"], message: "tickwork top: top draws on a terminal, and its input or output is not one: for a snapshot, run tickwork status (--json) (see: tickwork top --help)" },
  ])("$args: exit 2 and one line: $message", async ({ args, message }) => {
    const { code, stdout, stderr } = await run(args);
    expect(stderr).toBe(`${message}\n`);
    expect(code).toBe(2);
    expect(stdout).toBe("");
  });

  it("never creates the default database file for a usage error", () => {
    expect(existsSync(join(work.dir, "tickwork.db"))).toBe(false);
    expect(existsSync(join(work.dir, "x.db"))).toBe(false);
    expect(existsSync(join(work.dir, "mysql:"))).toBe(false);
    expect(existsSync(join(work.dir, "sqlite:"))).toBe(false);
  });
});
