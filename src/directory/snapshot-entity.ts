import type { EntityRef } from "../scim/scim-types.js";
import type { DirectoryStore, GroupRecord, SyncSnapshot, UserRecord } from "./directory-types.js";

/** An entity's sync snapshot (desired state, null for a tombstone, and generation); null when it is gone. */
export function snapshotEntity(
  directory: Pick<DirectoryStore, "snapshotUser" | "snapshotGroup">,
  ref: EntityRef,
): Promise<SyncSnapshot<UserRecord> | SyncSnapshot<GroupRecord> | null> {
  return ref.kind === "user"
    ? directory.snapshotUser(ref.source, ref.id)
    : directory.snapshotGroup(ref.source, ref.id);
}
