// What a consumer sees when a subpath needs a peer that is not installed: a TickworkError with the
// code TW_MISSING_PEER whose message names the package and the install command.
import { TickworkError } from "tickwork";

export async function expectMissingPeer(call: () => unknown, packageName: string): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (error instanceof TickworkError && error.code === "TW_MISSING_PEER" && error.message.includes(`npm install ${packageName}`)) {
      console.log(`  missing peer, as expected: ${error.message}`);
      return;
    }
    throw new Error(`expected TW_MISSING_PEER naming ${packageName}, got: ${String(error)}`, { cause: error });
  }
  throw new Error(`expected TW_MISSING_PEER naming ${packageName}, but the call succeeded`);
}
