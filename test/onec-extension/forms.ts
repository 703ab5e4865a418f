import { type Call, callsIn, type Lexed, type MethodInfo, type ModuleStructure } from "./bsl-lite.ts";
import { child, childrenNamed, path, walk, type XmlElement } from "./xml-lite.ts";

/**
 * Checks of managed forms in a Designer dump: Form.xml (items, attributes, commands, events) against
 * the form's Ext/Form/Module.bsl. Shapes follow Designer dumps of 1c-syntax/ssl_3_1_eng (format 2.16).
 * Every function returns "line: message" strings, so the checks can be fed broken forms.
 */

/** The compilation directive above a method (&НаКлиенте, &НаСервере…), or undefined. */
export function directiveOf(lexed: Lexed, method: MethodInfo): string | undefined {
  const annotations = lexed.tokens.filter((token) => token.kind === "annotation");
  let line = method.line - 1;
  while (lexed.annotationLines.has(line)) {
    const found = annotations.find((token) => token.line === line);
    if (found !== undefined && /^На/u.test(found.text)) return found.text;
    line -= 1;
  }
  return undefined;
}

/** Form events handled on the server: their handlers carry &НаСервере. */
const SERVER_EVENTS: ReadonlySet<string> = new Set([
  "OnCreateAtServer",
  "OnReadAtServer",
  "BeforeWriteAtServer",
  "OnWriteAtServer",
  "AfterWriteAtServer",
  "FillCheckProcessingAtServer",
  "OnLoadDataFromSettingsAtServer",
  "BeforeLoadDataFromSettingsAtServer",
  "OnSaveDataInSettingsAtServer",
]);

export interface FormModule {
  readonly lexed: Lexed;
  readonly structure: ModuleStructure;
}

/**
 * A form's Form.xml against its module: every event handler and command action is a procedure of the
 * module with the right directive (commands: one parameter, &НаКлиенте, region ОбработчикиКомандФормы),
 * every command sits on a button and every button names a command of the form, every DataPath starts
 * with a form attribute.
 */
export function formProblems(form: XmlElement, module: FormModule): string[] {
  const problems: string[] = [];
  const methods = new Map(module.structure.methods.map((method) => [method.name, method]));
  const handler = (name: string, line: number, what: string): MethodInfo | undefined => {
    const method = methods.get(name);
    if (method === undefined) {
      problems.push(`${line}: ${what} handler ${name} is not a method of the form module`);
      return undefined;
    }
    if (method.kind !== "PROCEDURE") problems.push(`${line}: ${what} handler ${name} must be a Процедура`);
    return method;
  };

  for (const { element, ancestors } of walk(form)) {
    if (element.name !== "Event") continue;
    const event = element.attributes.get("name") ?? "";
    const name = element.text.trim();
    const method = handler(name, element.line, `event ${event}`);
    if (method === undefined) continue;
    const atForm = ancestors[ancestors.length - 2] === form;
    const expected = atForm && SERVER_EVENTS.has(event) ? "НаСервере" : "НаКлиенте";
    const actual = directiveOf(module.lexed, method);
    if (actual !== expected) {
      problems.push(`${element.line}: ${name} handles ${event}: it needs &${expected}, has ${actual ?? "none"}`);
    }
  }

  const commands = childrenNamed(child(form, "Commands") ?? form, "Command");
  const buttons = [...walk(form)]
    .map(({ element }) => element)
    .filter((element) => element.name === "Button")
    .map((button) => ({ line: button.line, command: child(button, "CommandName")?.text.trim() ?? "" }));
  for (const command of commands) {
    const name = command.attributes.get("name") ?? "";
    const action = child(command, "Action");
    if (action === undefined || action.text.trim() === "") {
      problems.push(`${command.line}: command ${name} has no Action`);
    } else {
      const method = handler(action.text.trim(), action.line, `command ${name}`);
      if (method !== undefined) {
        if (method.params.length !== 1)
          problems.push(`${action.line}: command handler ${method.name} must take one parameter (Команда)`);
        if (directiveOf(module.lexed, method) !== "НаКлиенте")
          problems.push(`${action.line}: command handler ${method.name} needs &НаКлиенте`);
        if (method.regions[0] !== "ОбработчикиКомандФормы")
          problems.push(`${action.line}: command handler ${method.name} must be in ОбработчикиКомандФормы (ITS #455)`);
      }
    }
    if (!buttons.some((button) => button.command === `Form.Command.${name}`)) {
      problems.push(`${command.line}: command ${name} has no button on the form`);
    }
  }
  const commandNames = new Set(commands.map((command) => command.attributes.get("name")));
  for (const button of buttons) {
    const own = /^Form\.Command\.(.+)$/.exec(button.command);
    if (own !== null && !commandNames.has(own[1])) {
      problems.push(`${button.line}: button names ${button.command}, which is not a command of the form`);
    }
  }

  const attributes = new Set(
    childrenNamed(child(form, "Attributes") ?? form, "Attribute").map((attribute) => attribute.attributes.get("name")),
  );
  for (const { element } of walk(form)) {
    if (element.name !== "DataPath") continue;
    const head = element.text.trim().split(".")[0];
    if (!attributes.has(head))
      problems.push(`${element.line}: DataPath ${element.text.trim()}: no form attribute ${head}`);
  }
  return problems;
}

/** A register's DefaultListForm names one of its forms, listed in ChildObjects and present as files. */
export function defaultListFormProblems(
  register: XmlElement,
  registerName: string,
  files: ReadonlySet<string>,
): string[] {
  const setting = path(register, "Properties", "DefaultListForm");
  const value = setting?.text.trim() ?? "";
  const match = new RegExp(`^InformationRegister\\.${registerName}\\.Form\\.(.+)$`, "u").exec(value);
  if (match === null)
    return [`${setting?.line ?? register.line}: DefaultListForm "${value}" is not a form of ${registerName}`];
  const form = match[1] ?? "";
  const problems: string[] = [];
  const listed = childrenNamed(child(register, "ChildObjects") ?? register, "Form").map((entry) => entry.text.trim());
  if (!listed.includes(form))
    problems.push(`${setting?.line}: form ${form} is not listed in the register's ChildObjects`);
  const base = `InformationRegisters/${registerName}/Forms/${form}`;
  for (const rel of [`${base}.xml`, `${base}/Ext/Form.xml`, `${base}/Ext/Form/Module.bsl`]) {
    if (!files.has(rel)) problems.push(`${setting?.line}: ${rel} is missing`);
  }
  return problems;
}

/** A settings form edits every given constant through its main attribute НаборКонстант (ConstantsSet). */
export function constantFieldProblems(form: XmlElement, constants: readonly string[]): string[] {
  const problems: string[] = [];
  const main = childrenNamed(child(form, "Attributes") ?? form, "Attribute").find(
    (attribute) => child(attribute, "MainAttribute")?.text.trim() === "true",
  );
  if (
    main?.attributes.get("name") !== "НаборКонстант" ||
    path(main, "Type", "v8:Type")?.text.trim() !== "cfg:ConstantsSet"
  ) {
    problems.push(`${main?.line ?? form.line}: the main attribute must be НаборКонстант of type cfg:ConstantsSet`);
  }
  const edited = new Set(
    [...walk(form)]
      .map(({ element }) => element)
      .filter((element) => element.name === "DataPath")
      .map((element) => element.text.trim()),
  );
  for (const constant of constants) {
    if (!edited.has(`НаборКонстант.${constant}`))
      problems.push(`${form.line}: no field edits the constant ${constant}`);
  }
  return problems;
}

/** A field (dimension or resource) of a register, and whether it is a string of unlimited length. */
export interface RegisterField {
  readonly name: string;
  readonly unlimited: boolean;
}

/** The dimensions and resources of a register object (<InformationRegister>), by name. */
export function registerFields(register: XmlElement): Map<string, RegisterField> {
  const fields = new Map<string, RegisterField>();
  for (const kind of ["Dimension", "Resource"]) {
    for (const field of childrenNamed(child(register, "ChildObjects") ?? register, kind)) {
      const name = path(field, "Properties", "Name")?.text.trim() ?? "";
      const type = path(field, "Properties", "Type");
      const unlimited =
        child(type, "v8:Type")?.text.trim() === "xs:string" &&
        path(type, "v8:StringQualifiers", "v8:Length")?.text.trim() === "0";
      fields.set(name, { name, unlimited });
    }
  }
  return fields;
}

/** The aliases a query selects (… КАК Имя) before its first ИЗ. */
export function selectedFields(query: string): string[] {
  const head = query.split(/^\s*ИЗ\s*$/mu)[0] ?? "";
  return [...head.matchAll(/(?<![\p{L}\p{N}_])КАК\s+([\p{L}_][\p{L}\p{N}_]*)/gu)].map((match) => match[1] ?? "");
}

/** The query of a form's dynamic list attribute (Settings/QueryText), "" when it has none. */
export function listQuery(form: XmlElement, list: string): string {
  const attribute = childrenNamed(child(form, "Attributes") ?? form, "Attribute").find(
    (candidate) => candidate.attributes.get("name") === list,
  );
  return path(attribute, "Settings", "QueryText")?.text ?? "";
}

/**
 * A dynamic list against its query and its register: every column and every «use always» field of the list
 * (DataPath or UseAlways/Field `Список.Имя`) is selected by the query and is a field of the register, and the
 * query selects no string of unlimited length (each page of the list would carry it; the form reads such a
 * field for the current row only).
 */
export function listFieldProblems(
  form: XmlElement,
  list: string,
  fields: ReadonlyMap<string, RegisterField>,
): string[] {
  const problems: string[] = [];
  const selected = selectedFields(listQuery(form, list));
  for (const { element } of walk(form)) {
    if (element.name !== "DataPath" && element.name !== "Field") continue;
    const [head, field, ...rest] = element.text.trim().split(".");
    if (head !== list || field === undefined || rest.length > 0) continue;
    if (!selected.includes(field))
      problems.push(`${element.line}: ${list}.${field}: the list query selects no ${field}`);
    if (!fields.has(field)) problems.push(`${element.line}: ${list}.${field}: no field ${field} in the register`);
  }
  for (const field of selected) {
    if (fields.get(field)?.unlimited === true) {
      problems.push(`${form.line}: the list query selects ${field}, a string of unlimited length`);
    }
  }
  return problems;
}

/** The column fields of a form table (DataPath `Список.Имя` of its items), in the table's order. */
export function tableColumns(form: XmlElement, table: string): string[] {
  const found = [...walk(form)].find(
    ({ element }) => element.name === "Table" && element.attributes.get("name") === table,
  )?.element;
  return [...walk(child(found, "ChildItems") ?? form)]
    .map(({ element }) => element)
    .filter((element) => element.name === "DataPath")
    .map((element) => element.text.trim())
    .filter((data) => data.startsWith(`${table}.`))
    .map((data) => data.slice(table.length + 1));
}

/** Platform calls that name a method of the module in a string: the method runs later, on the client. */
const DEFERRED_BY_NAME: ReadonlySet<string> = new Set(["подключитьобработчикожидания", "описаниеоповещения"]);

/**
 * The calls made in one method of a module, "Модуль.Метод" for qualified ones. With `deferred`, a method named
 * in ПодключитьОбработчикОжидания("Имя", …) or Новый ОписаниеОповещения("Имя", ЭтотОбъект…) counts as called.
 */
export function methodCalls(module: FormModule, name: string, deferred = true): string[] {
  const methods = [...module.structure.methods].sort((a, b) => a.line - b.line);
  const index = methods.findIndex((method) => method.name === name);
  if (index < 0) return [];
  const from = methods[index]?.line ?? 0;
  const to = methods[index + 1]?.line ?? Number.POSITIVE_INFINITY;
  const tokens = module.lexed.tokens.filter((token) => token.line > from && token.line < to);
  const calls = callsIn(tokens).map((call: Call) =>
    call.qualifier === "" ? call.name : `${call.qualifier}.${call.name}`,
  );
  if (deferred) {
    tokens.forEach((token, at) => {
      const next = tokens[at + 2];
      if (DEFERRED_BY_NAME.has(token.lower) && tokens[at + 1]?.text === "(" && next?.kind === "string") {
        calls.push(next.text);
      }
    });
  }
  return calls;
}

/** Whether `target` is called from `from`, directly or through other methods of the module. */
export function reaches(module: FormModule, from: string, target: string, deferred = true): boolean {
  const own = new Set(module.structure.methods.map((method) => method.name));
  const seen = new Set<string>();
  const queue = [from];
  while (queue.length > 0) {
    const name = queue.shift() ?? "";
    if (seen.has(name)) continue;
    seen.add(name);
    for (const call of methodCalls(module, name, deferred)) {
      if (call === target) return true;
      if (own.has(call)) queue.push(call);
    }
  }
  return false;
}
