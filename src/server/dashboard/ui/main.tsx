import "uplot/dist/uPlot.min.css";
import "./dashboard.css";
import { render } from "preact";
import { AdminApi, takeTokenFromUrl } from "./api.js";
import { App } from "./app.js";

takeTokenFromUrl();
const root = document.getElementById("app")!;
root.textContent = "";
render(<App api={new AdminApi(root.dataset.base ?? "")} refreshMs={Number(root.dataset.refreshMs) || 2_000} />, root);
