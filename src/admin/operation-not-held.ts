/**
 * A write of an operation's record refused because its writer no longer holds the job the
 * operation runs under (OperationStore.transition with an OperationHolder): the job was handed on
 * to another holder, whose record this write would have overwritten. Nothing was written.
 */
export class OperationNotHeld extends Error {
  constructor(id: string) {
    super(`operation ${id}: its job is no longer held by this writer; nothing written`);
    this.name = "OperationNotHeld";
  }
}
