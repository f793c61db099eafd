import { packageVersion } from '../core/package-version.js';
import { commands } from './commands/index.js';

/**
 * `npm run cli -- <command> [args]`: operator tools that work against the configured store, or
 * (apply, token) against a running platform with --server. Exit codes follow sysexits.h: 0 done,
 * 64 usage, 65 invalid input, 69 unreachable, 75 store busy, 77 not allowed, 78 configuration.
 */
const version = packageVersion();

function usage(): string {
  const list = Object.entries(commands)
    .map(([n, c]) => `  ${n.padEnd(10)} ${c.summary}`)
    .join('\n');
  return `usage: npm run cli -- <command> [options]
       npm run cli -- help <command>     that command's options (or: <command> --help)
       npm run cli -- --version

commands:
${list}
`;
}

/** The command of that name: own entries only, so `constructor` or `__proto__` is no command. */
const commandNamed = (name: string | undefined) => (name !== undefined && Object.hasOwn(commands, name) ? commands[name] : undefined);

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--help' || name === '-h') {
    process.stdout.write(usage());
    return 0;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  if (name === 'help') {
    if (rest.length === 0) {
      process.stdout.write(usage());
      return 0;
    }
    const topic = commandNamed(rest[0]);
    if (!topic || rest.length > 1) {
      process.stderr.write(`unknown command "${rest.join(' ')}"\n${usage()}`);
      return 64;
    }
    return topic.run(['--help']);
  }
  const command = commandNamed(name);
  if (!command) {
    process.stderr.write(`${name ? `unknown command "${name}"\n` : ''}${usage()}`);
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
