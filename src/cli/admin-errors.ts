/** A command's arguments are wrong: the message, then the command's usage; exit 2 before any request. */
export class UsageError extends Error {}

/** The admin API could not be asked, or answered an error or something unexpected: exit 1. */
export class RequestError extends Error {
  /** No answer, or a 502/503/504 (a bridge restarting, Redis away for a moment): asking again may work. */
  constructor(
    message: string,
    readonly transient = false,
  ) {
    super(message);
  }
}
