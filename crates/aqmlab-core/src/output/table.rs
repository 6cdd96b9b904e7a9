//! Named, typed, column-oriented tables: what a run returns.
//! The Python layer turns each into a polars DataFrame; column names are a contract
//! (see `docs/output.md`).

#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    Str(Vec<String>),
    Bool(Vec<bool>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Bool(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One cell value when a row is pushed.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    F(f64),
    U(u64),
    I(i64),
    S(String),
    B(bool),
}

impl From<f64> for Val {
    fn from(v: f64) -> Self {
        Val::F(v)
    }
}
impl From<u64> for Val {
    fn from(v: u64) -> Self {
        Val::U(v)
    }
}
impl From<i64> for Val {
    fn from(v: i64) -> Self {
        Val::I(v)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Self {
        Val::S(v.to_string())
    }
}
impl From<String> for Val {
    fn from(v: String) -> Self {
        Val::S(v)
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Self {
        Val::B(v)
    }
}

/// The type of a column in a schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    F,
    U,
    I,
    S,
    B,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn new(name: &str, schema: &[(&str, Ty)]) -> Table {
        Table {
            name: name.to_string(),
            columns: schema
                .iter()
                .map(|&(n, t)| {
                    let c = match t {
                        Ty::F => Column::F64(Vec::new()),
                        Ty::U => Column::U64(Vec::new()),
                        Ty::I => Column::I64(Vec::new()),
                        Ty::S => Column::Str(Vec::new()),
                        Ty::B => Column::Bool(Vec::new()),
                    };
                    (n.to_string(), c)
                })
                .collect(),
        }
    }

    /// Append a row; values in schema order. Panics on a schema mismatch (a programming
    /// error, caught by tests).
    pub fn push(&mut self, row: Vec<Val>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "row width of table {}",
            self.name
        );
        for ((name, col), v) in self.columns.iter_mut().zip(row) {
            match (col, v) {
                (Column::F64(c), Val::F(x)) => c.push(x),
                (Column::U64(c), Val::U(x)) => c.push(x),
                (Column::I64(c), Val::I(x)) => c.push(x),
                (Column::Str(c), Val::S(x)) => c.push(x),
                (Column::Bool(c), Val::B(x)) => c.push(x),
                (_, v) => panic!("column {name} of table {}: wrong type for {v:?}", self.name),
            }
        }
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map(|c| c.1.len()).unwrap_or(0)
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.0 == name).map(|c| &c.1)
    }

    /// A float column by name (test and report convenience).
    pub fn f64s(&self, name: &str) -> Vec<f64> {
        match self.column(name) {
            Some(Column::F64(v)) => v.clone(),
            Some(Column::U64(v)) => v.iter().map(|&x| x as f64).collect(),
            Some(Column::I64(v)) => v.iter().map(|&x| x as f64).collect(),
            _ => panic!("no numeric column {name} in {}", self.name),
        }
    }

    pub fn strs(&self, name: &str) -> Vec<String> {
        match self.column(name) {
            Some(Column::Str(v)) => v.clone(),
            _ => panic!("no string column {name} in {}", self.name),
        }
    }

    /// Row index of the first row whose string column `col` equals `value`.
    pub fn find(&self, col: &str, value: &str) -> Option<usize> {
        self.strs(col).iter().position(|s| s == value)
    }
}

/// A Rust value that is one table cell, with its column type.
pub trait Cell: Into<Val> {
    const TY: Ty;
}
impl Cell for f64 {
    const TY: Ty = Ty::F;
}
impl Cell for u64 {
    const TY: Ty = Ty::U;
}
impl Cell for i64 {
    const TY: Ty = Ty::I;
}
impl Cell for String {
    const TY: Ty = Ty::S;
}
impl Cell for &str {
    const TY: Ty = Ty::S;
}
impl Cell for bool {
    const TY: Ty = Ty::B;
}

/// A column declared together with how to get its value from a row source `R`, so a
/// table's schema and values come from one list (`Table::from_rows`).
pub struct Col<'a, R> {
    pub name: &'static str,
    pub ty: Ty,
    get: Box<dyn Fn(&R) -> Val + 'a>,
}

/// Declare column `name` with its value; the type follows from the value.
pub fn col<'a, R, V: Cell>(name: &'static str, get: impl Fn(&R) -> V + 'a) -> Col<'a, R> {
    Col {
        name,
        ty: V::TY,
        get: Box::new(move |r| get(r).into()),
    }
}

impl Table {
    /// A table with one row per item of `rows`, columns as declared.
    pub fn from_rows<R>(
        name: &str,
        cols: &[Col<'_, R>],
        rows: impl IntoIterator<Item = R>,
    ) -> Table {
        let schema: Vec<(&str, Ty)> = cols.iter().map(|c| (c.name, c.ty)).collect();
        let mut t = Table::new(name, &schema);
        for r in rows {
            t.push(cols.iter().map(|c| (c.get)(&r)).collect());
        }
        t
    }

    /// Append the rows of `other`, a table of the same schema.
    pub fn append(&mut self, other: Table) {
        for ((name, a), (_, b)) in self.columns.iter_mut().zip(other.columns) {
            match (a, b) {
                (Column::F64(a), Column::F64(b)) => a.extend(b),
                (Column::U64(a), Column::U64(b)) => a.extend(b),
                (Column::I64(a), Column::I64(b)) => a.extend(b),
                (Column::Str(a), Column::Str(b)) => a.extend(b),
                (Column::Bool(a), Column::Bool(b)) => a.extend(b),
                _ => panic!("column {name} of table {}: schemas differ", self.name),
            }
        }
    }

    /// The column names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.0.as_str()).collect()
    }
}
