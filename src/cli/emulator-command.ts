/** `scim-bridge emulator`: implemented with the platform emulator (issue 3). */
export async function runEmulator(_args: string[]): Promise<number> {
  process.stderr.write("emulator: not wired yet\n");
  return 1;
}
