import { commands } from './commands/index.js';

/** `npm run cli -- <command> [args]`: operator tools that work against the configured store. */
async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) {
    const list = Object.entries(commands)
      .map(([n, c]) => `  ${n.padEnd(10)} ${c.summary}`)
      .join('\n');
    process.stderr.write(`${name ? `unknown command "${name}"\n` : ''}usage: npm run cli -- <command> [options]\n\ncommands:\n${list}\n`);
    return name ? 64 : 0;
  }
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${(error as Error).message ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
