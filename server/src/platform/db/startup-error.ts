/** A start-up problem the operator can fix; main.ts prints its message alone, without a stack. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}
