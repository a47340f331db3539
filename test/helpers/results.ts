// Checks a method's result against its result schema in openrpc.json (generated validators).
import { expect } from "chai";
import { resultValidatorsByMethod } from "../../generated/resultValidators.js";
import type { SchemaError } from "../../generated/methodTable.js";

type ResultValidator = ((value: unknown) => boolean) & { errors?: SchemaError[] | null };

export function resultValidatorFor(method: string): ResultValidator {
  const validator = (resultValidatorsByMethod as Record<string, ResultValidator | undefined>)[method];
  if (validator === undefined) throw new Error(`no result validator for ${method}`);
  return validator;
}

export function expectValidResult(method: string, value: unknown): void {
  const validate = resultValidatorFor(method);
  const valid = validate(value);
  expect(valid, `${method} result ${JSON.stringify(value)?.slice(0, 200)} fails its schema: ${JSON.stringify(validate.errors)}`).to.equal(true);
}
