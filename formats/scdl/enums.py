"""SCDL enum tables and file names, as bionemo-scdl 0.1.3 defines them
(`bionemo/scdl/util/scdl_constants.py`; the schema document gives no numbers)."""
from __future__ import annotations

# ArrayDType (IntEnum, written as a big-endian uint32). There is no 0 and no signed type.
ARRAY_DTYPE = {
    1: "UINT8_ARRAY", 2: "UINT16_ARRAY", 3: "UINT32_ARRAY", 4: "UINT64_ARRAY",
    5: "FLOAT16_ARRAY", 6: "FLOAT32_ARRAY", 7: "FLOAT64_ARRAY",
    8: "STRING_ARRAY", 9: "FIXED_STRING_ARRAY",
}
# ArrayDType -> numpy dtype of the raw (little-endian) array file; strings have none.
DTYPE_NUMPY = {1: "u1", 2: "u2", 3: "u4", 4: "u8", 5: "f2", 6: "f4", 7: "f8"}
NUMPY_NAME = {1: "uint8", 2: "uint16", 3: "uint32", 4: "uint64", 5: "float16", 6: "float32",
              7: "float64"}

BACKEND = {1: "MEMMAP_V0"}
# Python Enum NETWORK = "!" in the library, but the byte written is literally 0x01.
ENDIANNESS = {1: "NETWORK"}

MAGIC = b"SCDL"
HEADER_FILE = "header.sch"
METADATA_FILE = "metadata.json"
VERSION_FILE = "version.json"

# FileNames members that name arrays in header.sch -> the file that holds the array.
ARRAY_FILES = {
    "DATA": "data.npy",
    "ROWPTR": "row_ptr.npy",
    "COLPTR": "col_ptr.npy",
    "NEIGHBOR_INDICES": "neighbor_indices.npy",
    "NEIGHBOR_INDICES_PTR": "neighbor_indptr.npy",
    "NEIGHBOR_VALUES": "neighbor_values.npy",
}
CORE_ARRAYS = ("DATA", "ROWPTR", "COLPTR")

# Arrays an archive without header.sch has (every writer before 0.1.1), with the dtypes the
# library assumes then (its defaults: 0.0.8, 0.1.2 and 0.1.3 alike).
LEGACY_DTYPES = {"DATA": "f4", "ROWPTR": "u8", "COLPTR": "u4"}

# Neighbour files are never listed in header.sch; their dtypes are hard-coded in the library.
NEIGHBOR_DTYPES = {"NEIGHBOR_INDICES_PTR": "u8", "NEIGHBOR_INDICES": "u4",
                   "NEIGHBOR_VALUES": "f4"}

# Feature-index folders: 0.1.x writes var_features/ and obs_features/; 0.0.x wrote features/.
FEATURE_DIRS = ("var_features", "obs_features", "features")

