// generated/validators.ts and generated/resultValidators.ts: AJV validators compiled to standalone
// code at build time, so the node compiles no schema when it starts. Identical schemas share one
// validator.
import AjvModule from "ajv";
import standaloneCodeModule from "ajv/dist/standalone/index.js";
import type { JsonSchema, LoadedDocument } from "./document.js";
import { componentRefName, generatedBanner, inlineParamTypeName, pascalCase, resultTypeName } from "./naming.js";

// ajv is CommonJS: its default export arrives one level down under NodeNext.
const Ajv = AjvModule.default;
const standaloneCode = standaloneCodeModule.default;

/** The base URI the component schemas are registered under inside AJV. */
const schemasBaseUri = "https://chain-node.invalid/openrpc.json";

/** A JavaScript module and its declarations: TypeScript is not asked to analyse AJV's output. */
export interface EmittedModule {
  js: string;
  dts: string;
}

export interface EmittedValidators extends EmittedModule {
  /** For each method, the exported validator name of each parameter, in order. */
  paramValidatorNames: Map<string, string[]>;
}

export function emitParamValidators(document: LoadedDocument): EmittedValidators {
  // verbose: an error carries its schema, so the dispatcher can explain rules such as `not`.
  const registry = createValidatorRegistry(document, { verbose: true });
  const paramValidatorNames = new Map<string, string[]>();
  for (const method of document.methods) {
    paramValidatorNames.set(
      method.name,
      method.params.map((param) => registry.add(param.schema, inlineParamTypeName(method, param))),
    );
  }
  return { ...registry.emit(), paramValidatorNames };
}

/** Result validators are for tests and development checks; production never loads them. */
export function emitResultValidators(document: LoadedDocument): EmittedModule {
  const registry = createValidatorRegistry(document, { verbose: false });
  const byMethod = document.methods.map((method) => [method.name, registry.add(method.result.schema, resultTypeName(method))] as const);
  const table = byMethod.map(([method, name]) => `  ${JSON.stringify(method)}: ${name},`).join("\n");
  const emitted = registry.emit();
  return {
    js: `${emitted.js}\n/** The result validator of each method, by wire name. */\nexport const resultValidatorsByMethod = {\n${table}\n};\n`,
    dts: `${emitted.dts}\n/** The result validator of each method, by wire name. */\nexport declare const resultValidatorsByMethod: Readonly<Record<string, ParamValidator>>;\n`,
  };
}

function createValidatorRegistry(document: LoadedDocument, { verbose }: { verbose: boolean }) {
  const ajv = new Ajv({
    verbose,
    code: { source: true, esm: true },
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
    allErrors: false,
  });
  ajv.addKeyword({ keyword: "x-hex", schemaType: "object" });
  ajv.addSchema({ $id: schemasBaseUri, definitions: toAjvRefs(document.schemas) });

  const nameBySchema = new Map<string, string>();
  const exportMap: Record<string, string> = {};
  return {
    /** Registers a schema once and answers the name of its exported validator. */
    add(schema: JsonSchema, inlineName: string): string {
      const key = JSON.stringify(schema);
      const existing = nameBySchema.get(key);
      if (existing !== undefined) return existing;
      const name = `validate${componentRefName(schema) ?? pascalCase(inlineName)}`;
      nameBySchema.set(key, name);
      ajv.addSchema(toAjvRefs(schema) as object, name);
      exportMap[name] = name;
      return name;
    },
    emit(): EmittedModule {
      const names = Object.keys(exportMap);
      return {
        js: `${generatedBanner}${requiresToImports(standaloneCode(ajv, exportMap))}\n`,
        dts: `${generatedBanner}import type { ParamValidator } from "./methodTable.js";\n\n${names.map((name) => `export declare const ${name}: ParamValidator;`).join("\n")}\n`,
      };
    },
  };
}

/**
 * AJV's standalone ESM output still loads its runtime helpers (ucs2length for minLength, ...) with
 * require(), which an ES module does not have: turn each into an import.
 */
function requiresToImports(code: string): string {
  const modules: string[] = [];
  const body = code.replace(/require\("([^"]+)"\)/g, (_call, module: string) => {
    if (!modules.includes(module)) modules.push(module);
    return `ajvRuntime${modules.indexOf(module)}`;
  });
  const imports = modules.map((module, index) => `import ajvRuntime${index} from ${JSON.stringify(module.endsWith(".js") ? module : `${module}.js`)};\n`);
  return imports.join("") + body;
}

function toAjvRefs(schema: unknown): JsonSchema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${schemasBaseUri}#/definitions/`)) as JsonSchema;
}
