export * from "./attribute-values.js";
export * from "./coerce-attribute-value.js";
export * from "./plan-embed-group.js";
export * from "./plan-group.js";
export * from "./plan-types.js";
export * from "./plan-user.js";
export * from "./scim-path.js";
export * from "./user-profile.js";
