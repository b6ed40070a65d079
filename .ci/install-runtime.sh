# Sourced by .ci/bun-deno.sh and .ci/node-versions.sh: installs a JavaScript runtime from the npm
# registry at a pinned version. The npm packages `node`, `bun` and `deno` carry each runtime's
# binary; npx installs them into its cache, and the runtime it starts prints its own executable's
# path, so the suites then run that executable directly.

# Usage: install_runtime node|bun|deno VERSION   (prints the executable's path, no newline)
install_runtime() {
  local runtime="$1" version="$2"
  case "$runtime" in
    node | bun) npx -y "$runtime@$version" -e 'process.stdout.write(process.execPath)' ;;
    deno) npx -y "deno@$version" eval 'Deno.stdout.writeSync(new TextEncoder().encode(Deno.execPath()))' ;;
    *)
      echo "install_runtime: unknown runtime \"$runtime\" (node, bun or deno)" >&2
      return 2
      ;;
  esac
}
