/** A CLI sub-command: parses its own arguments, returns the process exit code. */
export interface CliCommand {
  readonly summary: string;
  run(args: readonly string[]): Promise<number>;
}
