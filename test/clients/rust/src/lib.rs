// The Rust recipe (docs/clients.md, "Rust"): tokio-postgres 0.7 takes neither
// i64 nor String from a snowflake column, and refuses an i64 parameter for one:
// a newtype with FromSql and ToSql carries the ID as an i64 for both the
// snowflake type and bigint.
use bytes::BytesMut;
use std::error::Error;
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};

/// A snowflake ID, read from and written to a snowflake or bigint column as int8's 8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snowflake(pub i64);

impl<'a> FromSql<'a> for Snowflake {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        i64::from_sql(&Type::INT8, raw).map(Snowflake)
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "snowflake" || *ty == Type::INT8
    }
}

impl ToSql for Snowflake {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        self.0.to_sql(&Type::INT8, out)
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "snowflake" || *ty == Type::INT8
    }

    to_sql_checked!();
}
