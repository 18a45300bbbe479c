/** User attribute definitions (integer ids) and per-user values, in memory. */
import type {
  UserAttribute,
  UserAttributeType,
  UserAttributeValue,
  UserAttributeValueValue,
} from "../platform-types.js";
import { badRequest, conflict, notFound } from "./emulator-error.js";

/** True when `value` has exactly the JSON type the definition asks for; [] fits either array type. */
export function valueMatchesType(type: UserAttributeType, value: UserAttributeValueValue): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "string_array":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
    case "number_array":
      return Array.isArray(value) && value.every((v) => typeof v === "number" && Number.isFinite(v));
  }
}

export class AttributeStore {
  readonly definitions = new Map<number, UserAttribute>();
  /** userId -> attributeId -> value */
  readonly values = new Map<string, Map<number, UserAttributeValueValue>>();
  private nextId = 1;

  clear(): void {
    this.definitions.clear();
    this.values.clear();
    this.nextId = 1;
  }

  list(type?: UserAttributeType): UserAttribute[] {
    return [...this.definitions.values()].filter((d) => type === undefined || d.type === type);
  }

  create(input: { name: string; type: UserAttributeType; displayName?: string }): UserAttribute {
    const lower = input.name.toLowerCase();
    for (const d of this.definitions.values()) {
      if (d.name.toLowerCase() === lower) throw conflict(`attribute ${input.name} exists`);
    }
    const definition: UserAttribute = {
      id: this.nextId++,
      name: input.name,
      type: input.type,
      ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
    };
    this.definitions.set(definition.id, definition);
    return definition;
  }

  update(id: number, input: { displayName?: unknown; type?: unknown; name?: unknown }): UserAttribute {
    const definition = this.definitions.get(id);
    if (!definition) throw notFound(`no user attribute ${id}`);
    if (input.type !== undefined && input.type !== definition.type) {
      throw badRequest("the type of a user attribute cannot change");
    }
    if (input.name !== undefined && input.name !== definition.name) {
      throw badRequest("the name of a user attribute cannot change");
    }
    if (typeof input.displayName === "string") definition.displayName = input.displayName;
    return definition;
  }

  valuesOf(userId: string): UserAttributeValue[] {
    const own = this.values.get(userId);
    if (!own) return [];
    return [...own.entries()]
      .sort(([a], [b]) => a - b)
      .flatMap(([attributeId, value]) => {
        const d = this.definitions.get(attributeId);
        return d ? [{ userId, attributeId, name: d.name, type: d.type, value }] : [];
      });
  }

  /** Stores (or with null removes) one value; the caller has checked that the user exists. */
  upsert(userId: string, attributeId: number, value: UserAttributeValueValue): UserAttributeValue {
    const d = this.definitions.get(attributeId);
    if (!d) throw notFound(`no user attribute ${attributeId}`);
    if (value === null) {
      this.values.get(userId)?.delete(attributeId);
    } else {
      if (!valueMatchesType(d.type, value)) throw badRequest(`value does not match attribute type ${d.type}`);
      let own = this.values.get(userId);
      if (!own) {
        own = new Map();
        this.values.set(userId, own);
      }
      own.set(attributeId, value);
    }
    return { userId, attributeId, name: d.name, type: d.type, value };
  }

  dropUser(userId: string): void {
    this.values.delete(userId);
  }
}
