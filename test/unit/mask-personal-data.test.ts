import { describe, expect, it } from "vitest";
import type { AttemptRecord } from "../../src/register/port.ts";
import {
  maskEmail,
  maskedAttempt,
  maskedRecord,
  maskFreeText,
  maskPersonalData,
  maskPhone,
} from "../../src/views/mask-personal-data.ts";
import { exampleEvent } from "../support/events.ts";
import { eventRecord } from "../support/records.ts";

describe("maskPersonalData: the stored body as a viewer sees it", () => {
  it("masks the customer's e-mail and phone and keeps everything else as stored", () => {
    const event = exampleEvent();
    const masked = maskPersonalData(event) as typeof event;
    const { email, phone } = masked.order.customer;
    expect(email).not.toContain("anna.smirnova");
    expect(phone).not.toContain("9001234");
    // Everything a 1C administrator matches an order by is untouched.
    expect({
      ...masked,
      order: { ...masked.order, customer: { ...masked.order.customer, email: "", phone: "" } },
    }).toEqual({
      ...event,
      order: { ...event.order, customer: { ...event.order.customer, email: "", phone: "" } },
    });
  });

  it("does not change the value it was given", () => {
    const event = exampleEvent();
    const before = JSON.stringify(event);
    maskPersonalData(event);
    expect(JSON.stringify(event)).toBe(before);
  });

  it("masks e-mail and phone under any property that names them, at any depth, in arrays too", () => {
    const body = {
      order: {
        recipient: { contact_phone: "+7 (900) 123-45-67", E_Mail: "boris@example.org" },
        phones: ["+79001112233", "+79004445566"],
      },
      customer_email: "c@example.net",
    };
    const masked = JSON.stringify(maskPersonalData(body));
    for (const secret of ["123-45", "boris", "7900111", "7900444", "c@example"]) expect(masked).not.toContain(secret);
  });

  it("masks a phone under the names forms give it (tel, mobile, Телефон), and leaves a hotel alone", () => {
    const body = {
      Tel: "+7 900 123-45-67",
      billing_tel: "+79001112233",
      mobile_number: "89004445566",
      Телефон: "+7 (900) 777-88-99",
      hotel: "Hotel 1234567",
    };
    const masked = maskPersonalData(body) as typeof body;
    for (const secret of ["123-45", "7900111", "8900444", "777-88"])
      expect(JSON.stringify(masked)).not.toContain(secret);
    expect(masked.hotel).toBe("Hotel 1234567");
  });

  it("masks an address written in free text, and leaves sums, ids and times alone", () => {
    const body = {
      comment: "Позвонить перед доставкой, копию чека на ivan.petrov@mail.ru, спасибо",
      total: "1890.00",
      event_id: "evt_2026-11-29_shop-a_100234",
      paid_at: "2026-11-29T12:34:50Z",
      quantity: 2,
      gift: true,
      note: null,
    };
    const masked = maskPersonalData(body) as typeof body;
    expect(masked.comment).not.toContain("ivan.petrov");
    expect(masked.comment).toMatch(/^Позвонить перед доставкой, копию чека на .+@mail\.ru, спасибо$/);
    expect({ ...masked, comment: "" }).toEqual({ ...body, comment: "" });
  });
});

describe("maskEmail and maskPhone", () => {
  it("keeps the first letter and the domain of an address", () => {
    expect(maskEmail("anna.smirnova@example.com")).toBe("a***@example.com");
    expect(maskEmail("not an address")).toBe("***");
    expect(maskEmail("")).toBe("");
  });

  it("keeps a phone number's layout and its last two digits only", () => {
    expect(maskPhone("+79001234567")).toBe("+*********67");
    expect(maskPhone("+7 (900) 123-45-67")).toBe("+* (***) ***-**-67");
  });

  it("hides a number too short to keep anything of", () => {
    expect(maskPhone("1234")).toBe("****");
  });
});

describe("maskFreeText, maskedRecord and maskedAttempt: 1C's texts as a viewer sees them", () => {
  it("masks each address quoted in a text and leaves the rest, quotes and JSON around it intact", () => {
    expect(maskFreeText('{"detail":"ИНН для anna@example.com и boris.k@shop.ru не заполнен"}')).toBe(
      '{"detail":"ИНН для a***@example.com и b***@shop.ru не заполнен"}',
    );
    expect(maskFreeText("no address here: SKU-001 at 50.00")).toBe("no address here: SKU-001 at 50.00");
  });

  it("masks a record's error and recorded answer, and an attempt's detail, and nothing else of them", () => {
    const record = {
      ...eventRecord({ eventId: "e-1" }),
      lastError: "onec_rejected: anna@example.com",
      response: { status: 422, body: '{"detail":"anna@example.com"}' },
    };
    expect(maskedRecord(record)).toEqual({
      ...record,
      lastError: "onec_rejected: a***@example.com",
      response: { status: 422, body: '{"detail":"a***@example.com"}' },
    });
    const attempt: AttemptRecord = {
      attempt: 1,
      leaseToken: 1,
      worker: "w",
      startedAt: 0,
      finishedAt: 5,
      durationMs: 5,
      outcome: "refused",
      httpStatus: 422,
      errorClass: "onec_rejected",
      detail: "refused: anna@example.com",
      applied: true,
    };
    expect(maskedAttempt(attempt)).toEqual({ ...attempt, detail: "refused: a***@example.com" });
    expect(maskedAttempt({ ...attempt, detail: null })).toEqual({ ...attempt, detail: null });
  });
});
