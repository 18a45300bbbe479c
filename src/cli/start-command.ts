/** `scim-bridge start`: wired in src/main-process.ts once the parts exist. */
export async function runStart(_args: string[]): Promise<number> {
  process.stderr.write("start: not wired yet\n");
  return 1;
}
