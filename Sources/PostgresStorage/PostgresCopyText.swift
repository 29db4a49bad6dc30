import FaultlineCore

/// Values in `COPY … FROM STDIN`'s text format (one row a line, columns separated by tabs, `\N` for NULL, backslash
/// escapes), converted from SQLite's storage classes to the target column's type: the encoding of
/// `PostgresBulkLoad.copy`.
///
/// Every value comes from a database file, so none is trusted to fit: an integer out of an `integer` column's range, a
/// flag that is neither 0 nor 1 or a number where a number cannot be are refused with the table and column named
/// (`StorageError.invalidValue`), never trapped on or stored as something else. Text holding U+0000 is stored with
/// U+FFFD, as the stores do (`StoredText`).
enum PostgresCopyText {
    static func append(_ value: TableValue, as column: PostgresColumn, of table: String, to out: inout [UInt8]) throws {
        func refuse(_ what: String) -> StorageError {
            StorageError(.invalidValue, "\(table).\(column.name) (\(column.type)): \(what)")
        }
        switch (column.type, value) {
        case (_, .null):
            out += [UInt8(ascii: "\\"), UInt8(ascii: "N")]
        case ("bigint", .integer(let number)):
            out += Array(String(number).utf8)
        case ("integer", .integer(let number)), ("smallint", .integer(let number)):
            let fits = column.type == "integer" ? Int32(exactly: number) != nil : Int16(exactly: number) != nil
            guard fits else { throw refuse("\(number) is out of range") }
            out += Array(String(number).utf8)
        case ("bigint", .real(let number)), ("integer", .real(let number)), ("smallint", .real(let number)):
            // SQLite stores an integral real in an INTEGER column as an integer; any other real is no integer.
            guard let integral = Int64(exactly: number) else { throw refuse("\(number) is not an integer") }
            try append(.integer(integral), as: column, of: table, to: &out)
        case ("double precision", .real(let number)):
            out += Array(text(number).utf8)
        case ("double precision", .integer(let number)):
            out += Array(String(number).utf8)
        case ("boolean", .integer(let flag)):
            guard flag == 0 || flag == 1 else { throw refuse("\(flag) is not a flag (0 or 1)") }
            out.append(UInt8(ascii: flag == 1 ? "t" : "f"))
        case ("text", .text(let string)), ("tsvector", .text(let string)):
            escape(StoredText.clean(string), to: &out)
        case ("text", .integer(let number)):
            out += Array(String(number).utf8)
        case ("text", .real(let number)):
            out += Array(text(number).utf8)
        case ("text", .blob(let bytes)):
            escape(StoredText.clean(String(decoding: bytes, as: UTF8.self)), to: &out)
        case ("bytea", .blob(let bytes)):
            hex(bytes, to: &out)
        case ("bytea", .text(let string)):
            hex(Array(string.utf8), to: &out)
        default:
            throw refuse("a \(kind(value)) value cannot be stored in it")
        }
    }

    static func kind(_ value: TableValue) -> String {
        switch value {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
    }

    /// A double as PostgreSQL reads it back exactly (Swift's shortest round-trip digits; its names for the non-finite).
    static func text(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        return number.description
    }

    /// Text with COPY's escapes: the backslash, and the tab, newline and carriage return that would end a column or row.
    static func escape(_ string: String, to out: inout [UInt8]) {
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            default: out.append(byte)
            }
        }
    }

    static let digits = Array("0123456789abcdef".utf8)

    /// `bytea`'s hex input (`\x0a1b…`), its backslash escaped for COPY.
    static func hex(_ bytes: [UInt8], to out: inout [UInt8]) {
        out.reserveCapacity(out.count &+ 3 &+ bytes.count &* 2)
        out += [UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")]
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
    }
}
