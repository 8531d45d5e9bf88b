// An exercise's solution (a notebook cell tagged "solution") starts folded on the site, as it does on Colab and
// in Jupyter: its code, and what it printed on the committed run, sit in a <details> the learner opens.
// tests/test_site.py checks it.
document.addEventListener("DOMContentLoaded", () => {
  for (const cell of document.querySelectorAll(".celltag_solution")) {
    const input = cell.querySelector(".jp-Cell-inputWrapper") || cell.querySelector(".jp-InputArea");
    if (!input || input.closest("details")) continue;
    const output = cell.querySelector(".jp-Cell-outputWrapper") || cell.querySelector(".jp-OutputArea");
    const details = document.createElement("details");
    details.className = "solution";
    const summary = document.createElement("summary");
    summary.textContent = output ? "Solution, and what it found on the committed run" : "Solution";
    input.replaceWith(details);
    details.append(summary, input);
    if (output && !output.closest("details")) details.append(output);
  }
});
